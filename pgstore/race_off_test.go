//go:build !race

package pgstore_test

// raceOn reports a build with the race detector.
const raceOn = false
