//go:build !race

package load

// raceEnabled: built with -race.
const raceEnabled = false
