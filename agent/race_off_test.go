//go:build !race

package agent_test

// raceOn reports a build with the race detector.
const raceOn = false
