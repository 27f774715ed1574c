//go:build !race

package render

// raceEnabled: built with -race.
const raceEnabled = false
