package crashtest

import (
	"iter"
	"testing"

	"github.com/nous-go/nous"
)

// CheckAnswered checks a shared session's view: n user messages, each
// stored once, each followed by a reply before the next one, no reply to
// nothing new, and the last message answered.
func CheckAnswered(t testing.TB, view iter.Seq2[int, nous.Message], n int) {
	t.Helper()
	seen, asked := map[string]bool{}, false
	for _, m := range view {
		switch m.Role {
		case nous.RoleUser:
			if seen[m.Content] {
				t.Fatalf("%q stored twice", m.Content)
			}
			seen[m.Content], asked = true, true
		case nous.RoleAssistant:
			if !asked {
				t.Fatalf("a reply %q to nothing new", m.Content)
			}
			asked = false
		}
	}
	if len(seen) != n || asked {
		t.Fatalf("%d user messages stored, want %d; the last answered: %v", len(seen), n, !asked)
	}
}
