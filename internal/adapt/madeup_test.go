package adapt

import (
	"fmt"
	"os"
	"testing"
)

// madeUpCases are IDs to make up: of id, not in taken, of the form valid
// takes (form's, or Anthropic's when form is nil, less the candidates in
// rejected), within max bytes.
var madeUpCases = []struct {
	name     string
	id       string
	taken    []string
	rejected []string
	max      int
	want     string
	form     func(string) bool
}{
	// Every candidate made up to the answer is looked at once: a loop
	// that never returns, returns a taken candidate, or stays on one
	// (rejected, so valid hears of it each time) fails at once.
	{"past a rejected and a taken candidate", "x", []string{"x", "x_3"}, []string{"x_2"}, 0, "x_4", nil},
	{"no ID", "", nil, nil, 0, "call_2", nil},
	{"characters the API refuses", "fn.get weather", []string{"fn.get weather"}, nil, 0, "fn_get_weather_2", nil},
	{"nothing the API takes", "!!", nil, nil, 0, "___2", nil},
	{"past those taken", "call_0", []string{"call_0", "call_0_2", "call_0_3"}, nil, 0, "call_0_4", nil},
	{"to two digits", "x", []string{"x_2", "x_3", "x_4", "x_5", "x_6", "x_7", "x_8", "x_9"}, nil, 0, "x_10", nil},
	{"cut to fit", "abcdefghijkl", nil, nil, 10, "abcdefgh_2", nil},
	{"one byte too long", "abcdefghi", []string{"abcdefghi"}, nil, 10, "abcdefgh_2", nil},
	{"just fits", "abcdefgh", []string{"abcdefgh"}, nil, 10, "abcdefgh_2", nil},
	{"cut to fit, past one taken", "abcdefghijkl", []string{"abcdefgh_2"}, nil, 10, "abcdefgh_3", nil},
	{"cut to fit, shorter for a longer suffix", "abcdefghijkl", []string{"abcdefgh_2", "abcdefgh_3", "abcdefgh_4", "abcdefgh_5", "abcdefgh_6", "abcdefgh_7", "abcdefgh_8", "abcdefgh_9"}, nil, 10, "abcdefg_10", nil},
	{"cut between characters", "aéé", nil, nil, 4, "a_2", func(id string) bool { return id != "" }},
}

// madeUpLimit is more candidates than any case needs.
const madeUpLimit = 1000

// errLoops is what a case's valid panics with once it has been asked about
// madeUpLimit candidates.
var errLoops = fmt.Errorf("asked about %d candidates without an answer: madeUp loops", madeUpLimit)

// checkMadeUp runs case k, and returns what is wrong with it.
func checkMadeUp(k int) (err error) {
	tc := madeUpCases[k]
	taken, rejected := map[string]bool{}, map[string]bool{}
	for _, id := range tc.taken {
		taken[id] = true
	}
	for _, id := range tc.rejected {
		rejected[id] = true
	}
	form := tc.form
	if form == nil {
		form = anthropicID
	}
	asked := 0
	valid := func(id string) bool {
		if asked++; asked > madeUpLimit {
			panic(errLoops)
		}
		return form(id) && !rejected[id]
	}
	defer func() {
		if r := recover(); r != nil {
			if r != errLoops {
				panic(r)
			}
			err = fmt.Errorf("%s: madeUp(%q): %w", tc.name, tc.id, errLoops)
		}
	}()
	if got := madeUp(tc.id, taken, valid, tc.max); got != tc.want {
		return fmt.Errorf("%s: madeUp(%q) = %q, want %q", tc.name, tc.id, got, tc.want)
	}
	return nil
}

func TestMadeUp(t *testing.T) {
	for k := range madeUpCases {
		if err := checkMadeUp(k); err != nil {
			t.Error(err)
		}
	}
}

// TestMain checks that madeUp ends before any test runs, and ends the
// tests when it does not: every test that makes up a call's ID would
// wait on it forever.
func TestMain(m *testing.M) {
	for k := range madeUpCases {
		if err := checkMadeUp(k); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL before the tests:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
