package reftest

import (
	"flag"
	"testing"
)

// The flags of the random tests, one for every test binary that imports
// this package (only tests do).
var (
	seedFlag = flag.Uint64("nous.seed", 0, "seed of the model-based, differential and random tests (0: the fixed default seed)")
	longFlag = flag.Bool("nous.long", false, "run the model-based and differential tests for many more steps")
)

// DefaultSeed is the seed of a random test run without -nous.seed.
const DefaultSeed = 20250101

// Seed returns the seed of a random test, the one given with -nous.seed or
// DefaultSeed, and logs how to replay it.
func Seed(t testing.TB) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = DefaultSeed
	}
	t.Logf("seed %d; replay with: go test -run '^%s$' -args -nous.seed=%d", seed, t.Name(), seed)
	return seed
}

// Long reports whether -nous.long was given.
func Long() bool { return *longFlag }
