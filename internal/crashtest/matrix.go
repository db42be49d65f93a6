//go:build unix

package crashtest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Matrix runs the scenario killed at every point, each round on a session
// of its own in the store open gives (env says to the children how to open
// the same store): a child killed at point k, then a resumer, then the
// checks. It ends at the first k the child completes the turn without
// reaching, and returns the number of points.
func Matrix(t *testing.T, test string, env []string, open func() (nous.Store, error)) int {
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for k := 1; ; k++ {
		session := fmt.Sprint("crash-", k, "-", uuid.NewString()[:8])
		led := path(dir, k)
		_, killed, _ := spawn(t, test, env, k, led, session)
		before := snapshot(t, s, session)
		resumer, killedToo, out := spawn(t, test, env, -1, led, session)
		if killedToo || !strings.Contains(out, "done") {
			t.Fatalf("point %d: the resumer did not end the turn: %s", k, out)
		}
		check(t, s, session, led, before, resumer, k)
		if !killed {
			return k - 1
		}
	}
}

// stored is what the store held of a round's session once its child died.
type stored struct {
	answered map[string]bool // the calls with a result
	replies  int             // the model's replies
}

// snapshot returns what s holds of session; nothing when it holds none.
func snapshot(t *testing.T, s nous.Store, session string) stored {
	t.Helper()
	out := stored{answered: map[string]bool{}}
	c, err := nous.LoadByName(context.Background(), s, session)
	if errors.Is(err, nous.ErrNotFound) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Messages() {
		switch m.Role {
		case nous.RoleTool:
			out.answered[m.ToolCallID] = true
		case nous.RoleAssistant:
			out.replies++
		}
	}
	return out
}

// check compares a round's session, as its resumer left it, with what
// its ledger says happened: the turn ended once, its calls paired; no
// call answered before the kill ran after it; the at-most-once tool ran
// at most once, the reconciled ones exactly once (the approved one
// included, decided once); and no reply the log held was asked for
// again.
func check(t *testing.T, s nous.Store, session, ledgerPath string, before stored, resumer, k int) {
	t.Helper()
	fail := func(format string, args ...any) { t.Fatalf("point %d: "+format, append([]any{k}, args...)...) }
	c, err := nous.LoadByName(context.Background(), s, session)
	if err != nil {
		fail("%v", err)
	}
	if err := c.CheckToolPairing(); err != nil {
		fail("%v", err)
	}
	view := c.Messages()
	if !c.Pending().Done() || view[len(view)-1].Content != "All paid." {
		fail("the turn did not end: %+v", c.Pending())
	}
	asked, decisions := 0, 0
	for _, m := range view {
		if m.Role == nous.RoleUser {
			asked++
		}
	}
	for e := range c.Log().All() {
		if e.Type == nous.EventApprovalDecision {
			decisions++
		}
	}
	led, err := readLedger(ledgerPath)
	if err != nil {
		fail("%v", err)
	}
	switch {
	case asked != 1:
		fail("the user's message stored %d times", asked)
	case decisions != 1:
		fail("%d decisions stored on the call that waits", decisions)
	case led.count("run", "pay-1", 0) > 1:
		fail("the at-most-once tool ran %d times", led.count("run", "pay-1", 0))
	case led.count("run", "book-1", 0) != 1 || led.count("run", "wire-1", 0) != 1:
		fail("the reconciled tools ran %d and %d times, want once each", led.count("run", "book-1", 0), led.count("run", "wire-1", 0))
	case led.count("run", "idem-1", 0) < 1:
		fail("the idempotent tool never ran")
	}
	for id := range before.answered {
		if n := led.count("run", id, resumer); n > 0 {
			fail("call %s, answered before the kill, ran %d times after it", id, n)
		}
	}
	for _, e := range led {
		if n, _ := strconv.Atoi(e[1]); e[0] == "model" && e[2] == strconv.Itoa(resumer) && n < before.replies {
			fail("the model was asked again for reply %d, which the log held", n+1)
		}
	}
}
