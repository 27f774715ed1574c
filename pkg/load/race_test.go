//go:build race

package load

// raceEnabled: built with -race (the render child then has no memory bound).
const raceEnabled = true
