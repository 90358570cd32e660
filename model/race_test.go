//go:build race

package model

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = true
