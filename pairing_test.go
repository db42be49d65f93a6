package nous_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

func call(id string) nous.ToolCall { return nous.ToolCall{ID: id, Name: "f"} }

func calls(ids ...string) nous.Message {
	m := nous.Message{Role: nous.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, call(id))
	}
	return m
}

func result(id string) nous.Message {
	return nous.Message{Role: nous.RoleTool, ToolCallID: id, Name: "f", Content: "ok"}
}

func TestCheckToolPairing(t *testing.T) {
	u, a := mUser("u"), mAssistant("a")
	for _, tt := range []struct {
		name string
		view []nous.Message
		want string // "" when the view pairs; else a piece of the error
	}{
		{"no tools", []nous.Message{u, a, u}, ""},
		{"one call", []nous.Message{u, calls("x"), result("x"), a}, ""},
		{"parallel calls, results in any order", []nous.Message{u, calls("x", "y"), result("y"), result("x"), a}, ""},
		{"the same id in two turns", []nous.Message{u, calls("call_0"), result("call_0"), u, calls("call_0"), result("call_0")}, ""},
		{"a result without its call", []nous.Message{u, result("x")}, `message 1, call "x": a tool result whose call is not open before it`},
		{"a result after another message", []nous.Message{u, calls("x"), u, result("x")}, `message 2, call "x": a message comes before this call's result`},
		{"a missing result of a parallel call", []nous.Message{u, calls("x", "y"), result("x"), a}, `message 3, call "y": a message comes before`},
		{"a result answered twice", []nous.Message{u, calls("x"), result("x"), result("x")}, `message 3, call "x": a tool result whose call is not open`},
		{"a call id twice in one message", []nous.Message{u, calls("x", "x"), result("x")}, `message 1, call "x": the call's ID is used twice`},
		{"ends with calls to run", []nous.Message{u, calls("x")}, `message 1, call "x": the call has no result`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := nous.NewContext(nous.WithMessages(tt.view...))
			err := c.CheckToolPairing()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, nous.ErrUnpaired)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A replacement that would break the pairing is refused and changes
// nothing; one that keeps it, or keeps a break the view already had, goes.
func TestReplaceKeepsThePairing(t *testing.T) {
	u, summary := mUser("u"), mSystem("summary")
	view := []nous.Message{u, calls("x", "y"), result("x"), result("y"), mAssistant("a"), u, calls("z"), result("z"), mAssistant("b")}
	for _, tt := range []struct {
		name        string
		first, last int
		m           nous.Message
		refused     bool
	}{
		{"a whole group", 1, 3, summary, false},
		{"a whole turn", 0, 4, summary, false},
		{"the call but not its results", 1, 1, summary, true},
		{"a result but not its call", 2, 2, summary, true},
		{"a range ending between a call and its results", 0, 2, summary, true},
		{"a range starting inside the results", 3, 5, summary, true},
		{"a result by another result of the same call", 2, 2, result("x"), false},
		{"a result by a result of a call not made", 2, 2, result("w"), true},
		{"the calls by the same calls", 1, 1, calls("x", "y"), false},
		{"the calls by fewer calls", 1, 1, calls("x"), true},
		{"a plain message by a call left open", 8, 8, calls("q"), false},
		{"a plain message by a call with a message after it", 5, 5, calls("q"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := nous.NewContext(nous.WithMessages(view...))
			require.NoError(t, c.CheckToolPairing())
			before := stateOf(c)
			err := c.ReplaceMessageRange(tt.first, tt.last, tt.m)
			if !tt.refused {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, nous.ErrUnpaired)
			assert.Equal(t, before, stateOf(c), "a refused replacement changes nothing")
		})
	}

	// A break the view already has does not stop a replacement elsewhere,
	// nor one that keeps it.
	broken := nous.NewContext(nous.WithMessages(u, result("orphan"), u, calls("x"), result("x"), mAssistant("a")))
	require.ErrorIs(t, broken.CheckToolPairing(), nous.ErrUnpaired)
	require.NoError(t, broken.ReplaceMessageRange(3, 4, summary))
	require.NoError(t, broken.ReplaceMessage(0, mUser("edited")))
}

// PatchDanglingToolCalls puts each missing result right after its call's
// group, in call order, matching results to calls by position, and the view
// it leaves pairs; the log records where each result went.
func TestPatchDanglingToolCallsPlacesResults(t *testing.T) {
	u, a := mUser("u"), mAssistant("a")
	text := func(c *nous.Context) []string {
		var out []string
		for _, m := range c.All() {
			s := string(m.Role)
			if m.Role == nous.RoleTool {
				s += ":" + m.ToolCallID
				if m.Metadata[nous.MetadataSynthesized] == true {
					s += "*"
				}
			}
			out = append(out, s)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		view []nous.Message
		want []string
	}{
		{"a call interrupted by the user", []nous.Message{u, calls("A"), u},
			[]string{"user", "assistant", "tool:A*", "user"}},
		{"one of two parallel calls answered", []nous.Message{u, calls("x", "y"), result("x"), a},
			[]string{"user", "assistant", "tool:x", "tool:y*", "assistant"}},
		{"calls in two turns, the id reused", []nous.Message{u, calls("call_0"), result("call_0"), u, calls("call_0"), u},
			[]string{"user", "assistant", "tool:call_0", "user", "assistant", "tool:call_0*", "user"}},
		{"the last call of the view", []nous.Message{u, calls("x", "y")},
			[]string{"user", "assistant", "tool:x*", "tool:y*"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := nous.NewContext(nous.WithMessages(tt.view...), nous.WithNeedsResponse(false))
			events := c.Log().Len()
			n := c.PatchDanglingToolCalls()
			assert.Equal(t, tt.want, text(c))
			assert.Equal(t, events+n, c.Log().Len(), "one event per result")
			assert.False(t, c.NeedsResponse, "NeedsResponse is left alone")
			require.NoError(t, c.CheckToolPairing())
			assert.Zero(t, c.PatchDanglingToolCalls(), "idempotent")

			// The events say where the results went, and the view is the
			// fold of the log, through a save and a load too.
			folded, err := nous.Fold(c.Log().Events())
			require.NoError(t, err)
			assert.Equal(t, c.Messages(), folded)
			for _, e := range c.Log().Events()[events:] {
				assert.NotZero(t, e.After, "inserted, not appended")
			}
			d := saveAndLoad(t, c)
			assert.Equal(t, c.Messages(), d.Messages())

			// A clone patched shares nothing written with the original.
			if n > 0 {
				base := nous.NewContext(nous.WithMessages(tt.view...))
				clone := base.Clone()
				before := base.Messages()
				clone.PatchDanglingToolCalls()
				assert.Equal(t, before, base.Messages())
			}
		})
	}
}

// At the end of the view too, a replacement may not drop a result or add a
// call to a group already answered; a replacement that ends the view with
// calls of its own starts a turn in progress. A refusal numbers the view as
// it would be.
func TestReplaceKeepsThePairingAtTheEnd(t *testing.T) {
	c := nous.NewContext(nous.WithMessages(mUser("u"), calls("a", "c"), result("c"), result("a")))
	require.ErrorIs(t, c.ReplaceMessageRange(2, 3, result("a")), nous.ErrUnpaired, "drops c's result")
	c = nous.NewContext(nous.WithMessages(mUser("u"), calls("a"), result("a")))
	require.ErrorIs(t, c.ReplaceMessage(1, calls("b", "a")), nous.ErrUnpaired, "adds a call b nothing answers")
	c = nous.NewContext(nous.WithMessages(mUser("u"), calls("a")))
	require.NoError(t, c.ReplaceMessage(1, calls("a", "b")), "a turn in progress")

	c = nous.NewContext(nous.WithMessages(mUser("u"), calls("a", "b"), result("a"), result("b"), mUser("u2")))
	err := c.ReplaceMessageRange(1, 2, calls("b", "c"))
	require.ErrorIs(t, err, nous.ErrUnpaired)
	assert.Contains(t, err.Error(), `message 3, call "c"`, "u2 is message 3 once the range is one message")
}

// The pairing error names the view index, the call and the problem, for
// errors.As.
func TestPairingErrorFields(t *testing.T) {
	c := nous.NewContext()
	call := nous.ToolCall{ID: "c1", Name: "f"}
	if err := c.AddMessages(nous.UserMessage("q"), nous.AssistantMessage("", call), nous.UserMessage("interrupts")); err != nil {
		t.Fatal(err)
	}
	err := c.CheckToolPairing()
	var pe nous.PairingError
	if !errors.As(err, &pe) || !errors.Is(err, nous.ErrUnpaired) {
		t.Fatalf("%v: not a PairingError wrapping ErrUnpaired", err)
	}
	if pe.Index != 2 || pe.CallID != "c1" || pe.Problem == "" {
		t.Fatalf("PairingError %+v, want message 2, call c1", pe)
	}
}

// A message that uses one call ID twice opens one call: PatchDanglingToolCalls
// answers it once, and CheckToolPairing then reports the second use, never
// an orphan of the patch's own making.
func TestPatchAndPairingAgreeOnARepeatedID(t *testing.T) {
	c := nous.NewContext()
	call := nous.ToolCall{ID: "dup", Name: "f"}
	require.NoError(t, c.AddMessage(nous.AssistantMessage("", call, call)))
	assert.Equal(t, 1, c.PatchDanglingToolCalls())
	var pe nous.PairingError
	require.ErrorAs(t, c.CheckToolPairing(), &pe)
	assert.Contains(t, pe.Problem, "twice", "the repeated ID is what is wrong, not the patch")
	assert.Equal(t, 0, c.PatchDanglingToolCalls(), "idempotent")
}
