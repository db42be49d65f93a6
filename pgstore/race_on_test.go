//go:build race

package pgstore_test

// raceOn reports a build with the race detector, whose children run
// several times slower: the writers' shares are reported, not judged.
const raceOn = true
