package nous_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/storetest"
)

// secretValue is a deps value under a key that names a secret: no document
// and no store may ever hold it.
const secretValue = "sk-SEAMS-never-on-disk"

// seams is one run of TestSeams: a context the run drives, the store it
// saves to (whose replies a flaky wrapper loses now and then), and what the
// run knows must hold: the calls recorded, and the document of the last
// save that returned nil.
type seams struct {
	t     *testing.T
	r     *rand.Rand
	ctx   context.Context
	store *flakyReplies
	c     *nous.Context
	calls []string // the IDs of the recorded calls, in order
	saved []byte   // c's document at its last acknowledged save; nil before one
	turn  int
	trace []string
}

// flakyReplies is a store whose next Append, when lose is set, stores the
// batch and then reports a failure, as a connection lost after a commit
// does.
type flakyReplies struct {
	nous.Store
	lose bool
}

func (s *flakyReplies) Append(ctx context.Context, b nous.Batch) error {
	if err := s.Store.Append(ctx, b); err != nil {
		return err
	}
	if s.lose {
		s.lose = false
		return errLostReply
	}
	return nil
}

// TestSeams chains the library's own operations at random (turns with
// parallel tools, recorded calls, direct appends and edits of ToolCalls,
// dangling calls patched, compaction, saves whose replies are lost,
// reloads, refreshes from a second handle, clones, round trips through
// Serialize) over the memory and the file store, and after every step
// checks what must always hold: the view pairs and sends; ToolCalls is the
// log's record; a save that returned nil stored exactly the context, each
// event once; a lost reply stores nothing twice; no secret reaches a
// document or a store.
func TestSeams(t *testing.T) {
	seed := nous.Seed(t)
	steps := 400
	if testing.Short() {
		steps = 120
	}
	if nous.Long() {
		steps = 4000
	}
	for _, backend := range []string{"memory", "file"} {
		t.Run(backend, func(t *testing.T) {
			var s nous.Store = storetest.NewMemory()
			if backend == "file" {
				fs, err := filestore.Open(t.TempDir(), filestore.WithoutSync())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { fs.Close() })
				s = fs
			}
			r := rand.New(rand.NewPCG(seed, seed^0x5eed))
			run := &seams{t: t, r: r, ctx: context.Background(), store: &flakyReplies{Store: s}}
			run.c = run.fresh()
			for step := range steps {
				run.step(step)
				run.check(step)
			}
		})
	}
}

func (s *seams) fresh() *nous.Context {
	return nous.NewContext(nous.WithLogger(quietLogger()), nous.WithSystemPrompt("be brief"),
		nous.WithDeps(map[string]any{"api_key": secretValue, "user": "ada"}))
}

func (s *seams) fail(step int, format string, args ...any) {
	s.t.Helper()
	tail := s.trace[max(0, len(s.trace)-12):]
	s.t.Fatalf("step %d: %s\nlast operations: %s", step, fmt.Sprintf(format, args...), strings.Join(tail, ", "))
}

func (s *seams) do(op string) { s.trace = append(s.trace, op) }

// step does one operation, chosen at random.
func (s *seams) step(step int) {
	c := s.c
	switch x := s.r.IntN(100); {
	case x < 25:
		s.do("turn")
		s.toolTurn(step)
	case x < 33:
		s.do("AddToolCall")
		id := fmt.Sprint("rec", step)
		c.AddToolCall(nous.ToolCall{ID: id, Name: "audit", Arguments: json.RawMessage(`{"step":` + fmt.Sprint(step) + `}`),
			Metadata: map[string]any{"thought_signature": "sig"}})
		s.calls = append(s.calls, id)
	case x < 38:
		s.do("append to ToolCalls")
		id := fmt.Sprint("direct", step)
		c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: id, Name: "direct"})
		s.calls = append(s.calls, id)
	case x < 41:
		s.do("edit ToolCalls")
		if len(c.ToolCalls) == 0 {
			return
		}
		kept := c.ToolCalls
		c.ToolCalls = slices.Clone(c.ToolCalls[1:])
		if err := c.Save(s.ctx, s.store); !errors.Is(err, nous.ErrToolCallsEdited) {
			s.fail(step, "a save of an edited list: %v", err)
		}
		if _, err := c.Serialize(); !errors.Is(err, nous.ErrToolCallsEdited) {
			s.fail(step, "Serialize of an edited list: %v", err)
		}
		c.ToolCalls = kept
	case x < 46:
		s.do("dangling call, patched")
		id := fmt.Sprint("dangling", step)
		mustStep(s, step, c.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: id, Name: "slow"})))
		if n := c.PatchDanglingToolCalls(); n != 1 {
			s.fail(step, "patched %d calls, want 1", n)
		}
		mustStep(s, step, c.AddMessage(nous.AssistantMessage("it was interrupted")))
	case x < 54:
		s.do("compact")
		budget := 200 + s.r.IntN(400)
		if _, err := c.Compact(s.ctx, budget, nous.WithKeepTurns(1)); err != nil && !errors.Is(err, nous.ErrOverBudget) {
			s.fail(step, "compact: %v", err)
		}
	case x < 70:
		s.do("save")
		s.save(step)
	case x < 74:
		s.do("save, reply lost")
		c.IncrementIteration() // something to save, state only half the time
		if s.r.IntN(2) == 0 {
			mustStep(s, step, c.AddMessage(nous.UserMessage("lost in transit")))
		}
		s.store.lose = true
		if err := c.Save(s.ctx, s.store); err == nil {
			s.fail(step, "a save whose reply was lost returned nil")
		}
		s.store.lose = false
	case x < 80:
		s.do("load")
		if s.saved == nil {
			return
		}
		s.save(step) // what is unsaved would be lost
		got, err := nous.Load(s.ctx, s.store, c.Log().ID())
		if err != nil {
			s.fail(step, "load: %v", err)
		}
		got.Logger = quietLogger()
		s.c = got
	case x < 85:
		s.do("refresh from a second handle")
		if s.saved == nil {
			return
		}
		s.save(step)
		other, err := nous.Load(s.ctx, s.store, c.Log().ID())
		if err != nil {
			s.fail(step, "load a second handle: %v", err)
		}
		other.Logger = quietLogger()
		mustStep(s, step, other.AddMessage(nous.UserMessage(fmt.Sprint("from the other handle ", step))))
		other.AddToolCall(nous.ToolCall{ID: fmt.Sprint("other", step), Name: "other"})
		if err := other.Save(s.ctx, s.store); err != nil {
			s.fail(step, "the other handle's save: %v", err)
		}
		if err := c.Refresh(s.ctx, s.store); err != nil {
			s.fail(step, "refresh: %v", err)
		}
		s.calls = append(s.calls, fmt.Sprint("other", step))
		s.saved = mustSerialize(s, step, c)
	case x < 89:
		s.do("clone, saved apart")
		d := c.Clone()
		mustStep(s, step, d.AddMessage(nous.UserMessage("the fork goes its own way")))
		if err := d.Save(s.ctx, s.store); err != nil {
			s.fail(step, "a clone's save: %v", err)
		}
		sameDoc(s, step, "the saved clone", mustSerialize(s, step, d), s.loaded(step, d.Log().ID()))
	case x < 94:
		s.do("round trip")
		data := mustSerialize(s, step, c)
		d, err := nous.DeserializeWithLogger(data, quietLogger())
		if err != nil {
			s.fail(step, "deserialize: %v", err)
		}
		sameDoc(s, step, "a round trip", data, mustSerialize(s, step, d))
	default:
		s.do("new session")
		s.save(step)
		s.c, s.calls, s.saved = s.fresh(), nil, nil
	}
}

// toolTurn is a user turn with one to three parallel tool calls, run, and
// the model's answer; the calls' arguments are sometimes malformed, as a
// model sends them.
func (s *seams) toolTurn(step int) {
	c := s.c
	s.turn++
	mustStep(s, step, c.AddMessage(nous.UserMessage(fmt.Sprintf("question %d: %s", s.turn, strings.Repeat("words ", s.r.IntN(40))))))
	n := 1 + s.r.IntN(3)
	calls := make([]nous.ToolCall, n)
	for i := range calls {
		args := `{"q":` + fmt.Sprint(i) + `}`
		if s.r.IntN(6) == 0 {
			args = `{"q": "Par`
		}
		calls[i] = nous.ToolCall{ID: fmt.Sprintf("t%d_%d", step, i), Name: "search", Arguments: json.RawMessage(args)}
	}
	mustStep(s, step, c.AddMessage(nous.AssistantMessage("", calls...)))
	sizes := map[string]int{} // drawn here: the tools run on goroutines of their own
	for _, call := range calls {
		sizes[call.ID] = 1 + s.r.IntN(30)
	}
	err := c.RunToolCalls(s.ctx, calls, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		var v map[string]any
		if err := rc.Call.ParseArguments(&v); err != nil {
			return nous.ToolResult{Err: err}
		}
		return nous.ToolResult{Content: strings.Repeat("result ", sizes[rc.Call.ID]),
			Update: nous.NewContextUpdate().Append("seen", rc.Call.ID).Set("session_token", secretValue)}
	})
	if err != nil {
		s.fail(step, "run tool calls: %v", err)
	}
	for _, call := range calls {
		s.calls = append(s.calls, call.ID) // every call run is recorded
	}
	mustStep(s, step, c.AddMessage(nous.AssistantMessage(fmt.Sprint("answer ", s.turn))))
}

// save saves c, retrying once after a lost reply; a save that returns nil
// is remembered.
func (s *seams) save(step int) {
	err := s.c.Save(s.ctx, s.store)
	if errors.Is(err, errLostReply) {
		err = s.c.Save(s.ctx, s.store)
	}
	if err != nil {
		s.fail(step, "save: %v", err)
	}
	s.saved = mustSerialize(s, step, s.c)
}

// loaded returns the document of log id as the store holds it.
func (s *seams) loaded(step int, id uuid.UUID) []byte {
	got, err := nous.Load(s.ctx, s.store, id)
	if err != nil {
		s.fail(step, "load %s: %v", id, err)
	}
	return mustSerialize(s, step, got)
}

// check verifies what must hold after every step.
func (s *seams) check(step int) {
	c := s.c
	if err := c.CheckToolPairing(); err != nil {
		s.fail(step, "the view does not pair: %v", err)
	}
	var ids []string
	for _, tc := range c.ToolCalls {
		ids = append(ids, tc.ID)
	}
	if !slices.Equal(ids, s.calls) {
		s.fail(step, "ToolCalls %v, want %v", ids, s.calls)
	}
	doc := mustSerialize(s, step, c)
	var fold []string
	for e := range c.Log().All() {
		if e.Call != nil {
			fold = append(fold, e.Call.ID)
		}
	}
	if !slices.Equal(fold, s.calls) {
		s.fail(step, "the log records %v, want %v", fold, s.calls)
	}
	if bytes.Contains(doc, []byte(secretValue)) {
		s.fail(step, "a secret in the document")
	}
	if s.saved == nil {
		return
	}
	stored := s.loaded(step, c.Log().ID())
	if bytes.Contains(stored, []byte(secretValue)) {
		s.fail(step, "a secret in the store")
	}
	// The store holds the last acknowledged save, or a later one whose
	// reply was lost; never anything else. Whatever it holds, saving c now
	// stores c exactly, each event once.
	if s.r.IntN(4) == 0 {
		s.save(step)
		sameDoc(s, step, "a save", s.saved, s.loaded(step, c.Log().ID()))
		st, err := s.store.Read(s.ctx, c.Log().ID(), 0)
		if err != nil {
			s.fail(step, "read: %v", err)
		}
		if int(st.Info.Head) != c.Log().Len() || len(st.Events) != c.Log().Len() {
			s.fail(step, "the store holds head %d and %d events for a log of %d", st.Info.Head, len(st.Events), c.Log().Len())
		}
	}
}

func sameDoc(s *seams, step int, what string, want, got []byte) {
	s.t.Helper()
	if !bytes.Equal(want, got) {
		s.fail(step, "%s differs:\nwant %.400s\ngot  %.400s", what, want, got)
	}
}

func mustStep(s *seams, step int, err error) {
	s.t.Helper()
	if err != nil {
		s.fail(step, "%v", err)
	}
}

func mustSerialize(s *seams, step int, c *nous.Context) []byte {
	s.t.Helper()
	b, err := c.Serialize()
	if err != nil {
		s.fail(step, "serialize: %v", err)
	}
	return b
}
