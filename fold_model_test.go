package nous_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
)

// The model-based test of the fold: long random sequences of every operation
// that changes a context (messages, bookkeeping events, replacements, the
// overlay, clones, patches, ContextUpdates alone and combined, and a
// serialize and restore), each applied both to a Context and to a plain
// model (a []Message, the seqs of the events behind it, the events expected
// in the log, the overlay, NeedsResponse, the deps as a naive reducer makes
// them and the warnings expected), compared after every step: in full for
// the contexts the step touched, and for the others at every fourth step
// (in between, their lengths, deps and flags).
//
// Replay a failure with the seed it prints (see nous.Seed); run longer
// with -nous.long:
//
//	go test -run TestFoldModel . -args -nous.seed=N
//	go test -run TestFoldModel . -args -nous.long

// modelEvent is what the model expects of one event of the log.
type modelEvent struct {
	Type               nous.EventType
	Data               map[string]any
	First, Last, After int64
	// Ops is, for a deps_update event, the number of operations it
	// records, its Data left out: what they hold is the deps tests'.
	Ops int
}

// foldModel is one context and its model.
type foldModel struct {
	name          string
	c             *nous.Context
	msgs          []nous.Message // the fold of the log, without the overlay
	seqs          []int64        // the seq of the event that produced each entry of msgs
	events        []modelEvent
	overlay       string
	needsResponse bool
	logID         string
	deps          map[string]any // never shared with the context, nor with another model
	warns         *modelWarnings // shared by the models of a run, as Clone shares the logger
}

// newFoldModel returns a new context and its model. The context logs to
// warns, which counts the warnings.
func newFoldModel(name string, warns *modelWarnings) *foldModel {
	c := nous.NewContext(nous.WithLogger(slog.New(&warns.got)))
	return &foldModel{name: name, c: c, needsResponse: true, logID: c.Log().ID().String(), deps: map[string]any{}, warns: warns}
}

func (m *foldModel) clone(name string) *foldModel {
	d := &foldModel{name: name, c: m.c.Clone(), overlay: m.overlay, needsResponse: m.needsResponse, warns: m.warns}
	for _, msg := range m.msgs {
		d.msgs = append(d.msgs, modelCopy(msg))
	}
	d.seqs = slices.Clone(m.seqs)
	d.events = slices.Clone(m.events) // their Data are never written
	d.logID = d.c.Log().ID().String()
	d.deps = reftest.Copy(m.deps).(map[string]any)
	return d
}

// modelWarnings records the warnings of a run's contexts, beside the count
// the model expects: one for each log event an update drops, and no other.
type modelWarnings struct {
	want int
	got  nous.LogRecorder
}

// off is 1 when the overlay shows as a system message of its own at index 0.
func (m *foldModel) off() int {
	if m.overlay != "" && (len(m.msgs) == 0 || m.msgs[0].Role != nous.RoleSystem) {
		return 1
	}
	return 0
}

// add records what adding msg does.
func (m *foldModel) add(msg nous.Message, source string) {
	typ := map[nous.Role]nous.EventType{
		nous.RoleUser: nous.EventUserMessage, nous.RoleAssistant: nous.EventAssistantMessage,
		nous.RoleSystem: nous.EventSystemMessage, nous.RoleTool: nous.EventToolResult,
	}[msg.Role]
	var data map[string]any
	if source != "" {
		data = map[string]any{"source": source}
	}
	m.events = append(m.events, modelEvent{Type: typ, Data: data})
	m.msgs = append(m.msgs, modelCopy(msg))
	m.seqs = append(m.seqs, int64(len(m.events)))
	switch msg.Role {
	case nous.RoleUser, nous.RoleTool:
		m.needsResponse = true
	case nous.RoleAssistant:
		m.needsResponse = len(msg.ToolCalls) > 0
	}
}

// check compares the context with the model in every way there is.
func (m *foldModel) check(t checkT, step int) {
	t.Helper()
	c := m.c
	where := fmt.Sprintf("step %d, context %s", step, m.name)

	events := c.Log().Events()
	require.Equal(t, len(m.events), c.Log().Len(), where)
	require.Len(t, events, len(m.events), where)
	for i, e := range events {
		want := m.events[i]
		got := modelEvent{Type: e.Type, Data: e.Data, First: e.First, Last: e.Last, After: e.After}
		if e.Type == nous.EventDepsUpdate {
			ops, _ := e.Data[nous.DataOps].([]any)
			got.Data, got.Ops = nil, len(ops)
			if want.Ops == -1 { // any number: an update that merges records the keys it changed
				got.Ops = -1
			}
		}
		if e.Seq != int64(i+1) || !reflect.DeepEqual(want, got) || e.Type.IsSurface() != (e.Message != nil) || e.CreatedAt.IsZero() {
			require.Equal(t, int64(i+1), e.Seq, where)
			require.Equal(t, want, got, "%s: event %d", where, i+1)
			require.Equal(t, e.Type.IsSurface(), e.Message != nil, "%s: event %d", where, i+1)
			require.False(t, e.CreatedAt.IsZero(), where)
		}
	}

	folded, err := nous.Fold(events)
	require.NoError(t, err, where)
	if len(m.msgs) == 0 {
		require.Empty(t, folded, where)
	} else {
		require.Equal(t, m.msgs, folded, "%s: the fold of the log", where)
	}

	view := c.Messages()
	require.Equal(t, nonNil(overlaid(m.msgs, m.overlay, c.StartedAt)), nonNil(view), "%s: the view", where)
	require.Equal(t, len(view), c.Len(), where)

	var all []nous.Message
	for i, msg := range c.All() {
		require.Equal(t, len(all), i, where)
		all = append(all, msg)
	}
	require.Equal(t, view, nonNil(all), "%s: All", where)

	last, ok := c.LastMessage()
	require.Equal(t, len(view) > 0, ok, where)
	if ok {
		require.Equal(t, view[len(view)-1], last, where)
	}
	require.Equal(t, m.needsResponse, c.NeedsResponse, "%s: NeedsResponse", where)
	problems := modelPairing(m.msgs, true)
	require.Equal(t, len(problems) == 0, c.CheckToolPairing() == nil, "%s: CheckToolPairing says %v, the model %v", where, c.CheckToolPairing(), problems)
	require.Equal(t, m.overlay, c.SystemPromptOverlay(), where)
	require.Equal(t, m.logID, c.Log().ID().String(), where)
	require.Equal(t, m.deps, c.Deps, "%s: deps", where)
	require.Len(t, m.warns.got.Warnings(), m.warns.want, "%s: warnings", where)
}

// checkQuick is the check of a context the step did not touch: what a
// change would show at once. The full check runs on every context at
// regular steps too; running it on all of them at every step would make the
// test quadratic in the number of contexts as well as in their length.
func (m *foldModel) checkQuick(t checkT, step int) {
	t.Helper()
	where := fmt.Sprintf("step %d, context %s (untouched)", step, m.name)
	require.Equal(t, len(m.events), m.c.Log().Len(), where)
	require.Equal(t, len(m.msgs)+m.off(), m.c.Len(), where)
	require.Equal(t, m.needsResponse, m.c.NeedsResponse, where)
	require.Equal(t, m.overlay, m.c.SystemPromptOverlay(), where)
	require.Equal(t, m.logID, m.c.Log().ID().String(), where)
	require.Equal(t, m.deps, m.c.Deps, "%s: deps", where)
}

func nonNil(ms []nous.Message) []nous.Message {
	if ms == nil {
		return []nous.Message{}
	}
	return ms
}

// checkT is what check needs of a *testing.T, so that a test of the check
// can hand it a recorder.
type checkT interface {
	require.TestingT
	Helper()
}

// failRecorder records whether a check failed; FailNow stops the goroutine.
type failRecorder struct{ failed bool }

func (f *failRecorder) Errorf(string, ...any) { f.failed = true }
func (f *failRecorder) FailNow()              { f.failed = true; runtime.Goexit() }
func (f *failRecorder) Helper()               {}

// modelGen makes random messages.
type modelGen struct {
	r     *rand.Rand
	n     int // counter for unique texts, call ids and times
	calls []nous.ToolCall
	deps  *reftest.Gen
}

func (g *modelGen) next() int { g.n++; return g.n }

func (g *modelGen) metadata() map[string]any {
	switch g.r.IntN(5) {
	case 0:
		return map[string]any{}
	case 1:
		return map[string]any{"n": g.next(), "f": 0.5, "nested": map[string]any{"list": []any{1, "two", map[string]any{"three": 3}}}}
	}
	return nil
}

func (g *modelGen) parts() []nous.ContentPart {
	var ps []nous.ContentPart
	for range 1 + g.r.IntN(3) {
		switch g.r.IntN(4) {
		case 0:
			ps = append(ps, nous.ContentPart{Type: nous.PartImage, Content: "aGk=", Options: map[string]any{"media_type": "image/png", "size": map[string]any{"w": 2}}})
		case 1:
			ps = append(ps, nous.ThinkingPart("thought", "sig+/="+strconv.Itoa(g.next())))
		default:
			ps = append(ps, nous.TextPart("p"+strconv.Itoa(g.next())))
		}
	}
	return ps
}

// message returns a valid message.
func (g *modelGen) message() nous.Message {
	k := g.next()
	m := nous.Message{Content: "m" + strconv.Itoa(k), CreatedAt: at(k), Metadata: g.metadata()}
	switch x := g.r.IntN(20); {
	case x < 3:
		m.Role = nous.RoleSystem
	case x < 9:
		m.Role = nous.RoleUser
	case x < 16:
		m.Role = nous.RoleAssistant
		if g.r.IntN(3) == 0 {
			m.Content = ""
		}
		if g.r.IntN(2) == 0 {
			for range 1 + g.r.IntN(3) {
				tc := nous.ToolCall{ID: "call" + strconv.Itoa(g.next()), Name: "tool" + strconv.Itoa(g.r.IntN(3))}
				if len(g.calls) > 0 && g.r.IntN(8) == 0 {
					tc.ID = g.calls[g.r.IntN(len(g.calls))].ID // ids may repeat
				}
				if g.r.IntN(2) == 0 {
					tc.Arguments = json.RawMessage(`{"q":"` + strconv.Itoa(k) + `","n":[1,2]}`)
				}
				if g.r.IntN(3) == 0 {
					tc.Metadata = map[string]any{"thought_signature": "c2ln", "k": k}
				}
				m.ToolCalls = append(m.ToolCalls, tc)
				g.calls = append(g.calls, tc)
			}
		}
	default:
		m.Role = nous.RoleTool
		m.ToolCallID = "unknown" + strconv.Itoa(k)
		if len(g.calls) > 0 && g.r.IntN(4) != 0 {
			tc := g.calls[g.r.IntN(len(g.calls))]
			m.ToolCallID, m.Name = tc.ID, tc.Name
		}
	}
	if m.Role != nous.RoleTool && g.r.IntN(4) == 0 {
		m.Parts = g.parts()
		if g.r.IntN(2) == 0 {
			m.Content = ""
		}
	}
	if g.r.IntN(4) == 0 {
		m.ReasoningContent = "because"
	}
	return m
}

// invalid returns a message that Validate refuses.
func (g *modelGen) invalid() nous.Message {
	switch g.r.IntN(5) {
	case 0:
		return nous.Message{Role: "robot", Content: "x"}
	case 1:
		return nous.Message{Role: nous.RoleTool, Content: "no id"}
	case 2:
		return nous.Message{Role: nous.RoleUser}
	case 3:
		return nous.Message{Role: nous.RoleAssistant, ToolCalls: []nous.ToolCall{{Name: "no id"}}}
	}
	return nous.Message{Role: nous.RoleUser, Content: "x", ToolCallID: "only tools carry one"}
}

// apply records what applying the update of ops, which returned err, does,
// and reports whether the update failed: when the model's reducer fails, err
// must be a type mismatch and nothing changes; otherwise the deps are reduced
// and the log events logged, but those of a type other than bookkeeping,
// which are dropped with a warning.
func (m *foldModel) apply(t checkT, err error, ops []reftest.Op, op string) (failed bool) {
	t.Helper()
	deps, failAt := reftest.Reduce(m.deps, ops)
	if failAt >= 0 {
		require.ErrorIs(t, err, nous.ErrTypeMismatch, "%s (the model fails at operation %d)", op, failAt)
		return true
	}
	require.NoError(t, err, op)
	m.deps = deps
	recorded, merges := 0, false // the deps operations a deps_update event records, first: those on keys that are not secrets
	for _, o := range ops {
		if o.Kind != reftest.Log && !nous.IsSecretKey(o.Key) {
			recorded++
		}
		merges = merges || o.Kind == reftest.Merge
	}
	if recorded > 0 && merges {
		m.events = append(m.events, modelEvent{Type: nous.EventDepsUpdate, Ops: -1}) // the values of the keys it changed
	} else if recorded > 0 {
		m.events = append(m.events, modelEvent{Type: nous.EventDepsUpdate, Ops: recorded})
	}
	for _, o := range ops {
		switch {
		case o.Kind != reftest.Log:
		case reftest.Bookkeeping[o.Event]:
			m.events = append(m.events, modelEvent{Type: nous.EventType(o.Event), Data: reftest.Copy(o.Data).(map[string]any)})
		default:
			m.warns.want++
		}
	}
	return false
}

// restore serializes the context, restores it and carries on with the
// restored one. What a restore keeps is checked here against the context
// written (its events exactly, times included, the log's ID, parent and
// fork seq, the deps, a second Serialize); the model then forgets what is
// never written (the overlay, the secrets) and the runtime logger is set
// again, as a caller does.
func (m *foldModel) restore(t checkT, op string) {
	t.Helper()
	old := m.c
	blob, err := old.Serialize()
	require.NoError(t, err, op)
	c, err := nous.Deserialize(blob)
	require.NoError(t, err, op)

	// Serialize redacts deps and event data without a warning: that is
	// the documented rule.
	want := old.Log().Events()
	for i := range want {
		want[i].Data = reftest.Redact(want[i].Data)
	}
	require.Equal(t, want, c.Log().Events(), "%s: the events", op)
	require.Equal(t, old.Log().ID(), c.Log().ID(), op)
	id, seq, ok := old.Log().Parent()
	id2, seq2, ok2 := c.Log().Parent()
	require.Equal(t, []any{id, seq, ok}, []any{id2, seq2, ok2}, "%s: the parent", op)
	require.Equal(t, reftest.Redact(old.Deps), c.Deps, "%s: the deps", op)
	require.Equal(t, old.NeedsResponse, c.NeedsResponse, op)
	require.Empty(t, c.SystemPromptOverlay(), op)
	require.Equal(t, nonNil(m.msgs), nonNil(c.Messages()), "%s: the view without the overlay", op)
	again, err := c.Serialize()
	require.NoError(t, err, op)
	require.Equal(t, string(blob), string(again), "%s: serialize the restored context", op)

	c.Logger = old.Logger
	m.c, m.overlay = c, ""
	m.deps = reftest.Redact(m.deps)
	for i := range m.events {
		m.events[i].Data = reftest.Redact(m.events[i].Data)
	}
}

// update returns the operations of an update of up to five operations
// (none too) that succeed on deps, and the deps after them; when fail, they
// also hold failing operations somewhere, and the deps returned are deps.
func (g *modelGen) update(deps map[string]any, fail bool) ([]reftest.Op, map[string]any) {
	n := g.r.IntN(6)
	failAt := -1
	if fail {
		failAt = g.r.IntN(n + 1)
	}
	var ops []reftest.Op
	state := deps
	for i := range n + 1 {
		if i == failAt {
			ops = append(ops, g.deps.Failing(state)...)
		}
		if i == n {
			break
		}
		for {
			o := g.deps.Op(state)
			if o.Kind == reftest.Log && g.r.IntN(3) == 0 {
				o.Data = nil
			}
			if next, failAt := reftest.Reduce(state, []reftest.Op{o}); failAt < 0 {
				ops, state = append(ops, o), next
				break
			}
		}
	}
	if fail {
		return ops, deps
	}
	return ops, state
}

func TestFoldModel(t *testing.T) {
	steps, runs := 300, 4
	switch {
	case nous.Long():
		steps, runs = 1000, 16
	case testing.Short():
		steps, runs = 100, 2
	}
	seed := nous.Seed(t)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for run := range runs {
		runFoldModel(t, r, run, steps)
	}
}

func runFoldModel(t *testing.T, r *rand.Rand, run, steps int) {
	g := &modelGen{r: r, deps: &reftest.Gen{Src: r, JSON: true,
		Keys:    []string{"a", "b", "list", "list", "m", "m", "n", "API_Key", "max_tokens"},
		SubKeys: []string{"x", "y", "z", "db_Password", "x-api-keys", "token_count"},
		Events: []string{"turn_start", "turn_end", "step_start", "step_end", "tool_call", "request_header",
			"runtime_event", "turn_start", "tool_call", "user_message", "replace", "tool_result", "nope"},
	}}
	first := newFoldModel("c0", &modelWarnings{})
	models := []*foldModel{first}
	var trace []string
	defer func() {
		if t.Failed() {
			k := max(0, len(trace)-40)
			t.Logf("run %d, last operations:\n%s", run, strings.Join(trace[k:], "\n"))
		}
	}()
	clones := 0
	stats := map[string]int{}
	defer func() {
		t.Logf("run %d: %d steps, operations %v, log events dropped %d", run, steps, stats, first.warns.want)
	}()
	if r.IntN(2) == 0 {
		// Half the runs start the way most conversations do.
		sys := nous.Message{Role: nous.RoleSystem, Content: "system prompt", CreatedAt: at(0)}
		require.NoError(t, first.c.AddMessage(sys))
		first.add(sys, "")
	}

	for step := range steps {
		m := models[r.IntN(len(models))]
		c := m.c
		touched := []*foldModel{m}
		var op, kind string
		switch x := r.IntN(120); {
		case x < 30: // add one
			kind = "add"
			msg := g.message()
			source := ""
			if r.IntN(8) == 0 {
				source = []string{"memory", "knowledge_base"}[r.IntN(2)]
			}
			op = fmt.Sprintf("%s.AddMessage(%s %q, source %q)", m.name, msg.Role, msg.Text(), source)
			var opts []nous.MessageOption
			if source != "" {
				opts = append(opts, nous.WithSource(source))
			}
			require.NoError(t, c.AddMessage(msg, opts...), op)
			m.add(msg, source)
			if r.IntN(3) == 0 {
				reftest.Scribble(&msg)
			}
		case x < 40: // add a batch, sometimes with an invalid message in it
			kind = "batch"
			batch := make([]nous.Message, r.IntN(5))
			for i := range batch {
				batch[i] = g.message()
			}
			bad := len(batch) > 0 && r.IntN(4) == 0
			if bad {
				batch[r.IntN(len(batch))] = g.invalid()
			}
			op = fmt.Sprintf("%s.AddMessages(%d messages, invalid=%v)", m.name, len(batch), bad)
			err := c.AddMessages(batch...)
			if bad {
				require.ErrorIs(t, err, nous.ErrInvalidMessage, op)
			} else {
				require.NoError(t, err, op)
				for _, msg := range batch {
					m.add(msg, "")
				}
			}
			for i := range batch {
				reftest.Scribble(&batch[i])
			}
		case x < 45: // an invalid single message
			kind = "invalid"
			op = m.name + ".AddMessage(invalid)"
			require.ErrorIs(t, c.AddMessage(g.invalid()), nous.ErrInvalidMessage, op)
		case x < 55: // a bookkeeping event, or a refused one
			kind = "log event"
			types := []nous.EventType{nous.EventTurnStart, nous.EventTurnEnd, nous.EventStepStart, nous.EventStepEnd, nous.EventToolCall, nous.EventRequestHeader, nous.EventUserMessage, nous.EventReplace, "nope"}
			typ := types[r.IntN(len(types))]
			var data map[string]any
			if r.IntN(2) == 0 {
				data = map[string]any{"step": step, "nested": map[string]any{"l": []any{1, 2}}}
			}
			op = fmt.Sprintf("%s.LogEvent(%s)", m.name, typ)
			err := c.LogEvent(typ, data)
			if typ.IsBookkeeping() {
				require.NoError(t, err, op)
				m.events = append(m.events, modelEvent{Type: typ, Data: reftest.Copy(data).(map[string]any)})
				reftest.Scribble(data)
			} else {
				require.Error(t, err, op)
			}
		case x < 72: // replace a range (often a single message, sometimes out of range)
			kind = "replace"
			n := len(m.msgs) + m.off()
			first := r.IntN(n+2) - 1
			if r.IntN(4) == 0 {
				first = m.off() // the start of the log: the overlay's neighbour
			}
			last := first
			switch r.IntN(4) {
			case 0, 1:
				last = first + r.IntN(4)
			case 2:
				last = first + r.IntN(n+1) // compaction of a long stretch
			}
			msg := g.message()
			if r.IntN(3) == 0 {
				msg = nous.Message{Role: nous.RoleSystem, Content: "summary " + strconv.Itoa(g.next()), CreatedAt: at(g.n)}
			}
			invalid := r.IntN(10) == 0
			if invalid {
				msg = g.invalid()
			}
			op = fmt.Sprintf("%s.ReplaceMessageRange(%d, %d, %s %q) of %d (overlay offset %d)", m.name, first, last, msg.Role, msg.Text(), n, m.off())
			var err error
			if first == last && r.IntN(2) == 0 {
				err = c.ReplaceMessage(first, msg)
			} else {
				err = c.ReplaceMessageRange(first, last, msg)
			}
			breaks := func() bool {
				f, z := first-m.off(), last-m.off()
				replaced := slices.Replace(slices.Clone(m.msgs), f, z+1, msg)
				var open []string // msg's own calls, open because it ends the view: a turn in progress
				if z == len(m.msgs)-1 {
					for _, tc := range msg.ToolCalls {
						open = append(open, tc.ID+": unanswered")
					}
				}
				return modelBreaksPairing(m.msgs, replaced, open)
			}
			switch {
			case first < m.off() || last >= n || first < 0:
				require.ErrorIs(t, err, nous.ErrOutOfRange, op)
			case invalid:
				require.ErrorIs(t, err, nous.ErrInvalidMessage, op)
			case breaks():
				require.ErrorIs(t, err, nous.ErrUnpaired, op)
				op += " (refused: it breaks the pairing)"
			default:
				require.NoError(t, err, op)
				f, z := first-m.off(), last-m.off()
				rep := modelCopy(msg)
				rep.CreatedAt = m.msgs[f].CreatedAt
				m.events = append(m.events, modelEvent{Type: nous.EventReplace, First: m.seqs[f], Last: m.seqs[z]})
				m.msgs = slices.Replace(m.msgs, f, z+1, rep)
				m.seqs = slices.Replace(m.seqs, f, z+1, int64(len(m.events)))
			}
			reftest.Scribble(&msg)
		case x < 80: // the overlay
			kind = "overlay"
			text := []string{"", "", "overlay A", "overlay B\nline two"}[r.IntN(4)]
			op = fmt.Sprintf("%s.SetSystemPromptOverlay(%q)", m.name, text)
			c.SetSystemPromptOverlay(text)
			m.overlay = text
		case x < 86: // clone, then both diverge
			kind = "clone"
			if len(models) >= 4 {
				// forget one, so that new clones keep coming
				i := r.IntN(len(models))
				op = "forget " + models[i].name
				models = slices.Delete(models, i, i+1)
				break
			}
			clones++
			d := m.clone(fmt.Sprintf("c%d", clones))
			op = fmt.Sprintf("%s := %s.Clone()", d.name, m.name)
			id, seq, ok := d.c.Log().Parent()
			require.True(t, ok, op)
			require.Equal(t, m.logID, id.String(), op)
			require.Equal(t, int64(len(m.events)), seq, op)
			require.NotEqual(t, m.logID, d.logID, op)
			models = append(models, d)
			touched = append(touched, d)
		case x >= 100 && x < 112: // apply an update; one in five fails
			kind = "update"
			fail := r.IntN(5) == 0
			ops, _ := g.update(m.deps, fail)
			u := nous.BuildForTest(ops)
			op = fmt.Sprintf("%s: apply %v", m.name, ops)
			require.Equal(t, len(ops), u.Len(), op)
			var before ctxState
			var deps map[string]any
			if fail {
				before, deps = stateOf(c), reftest.Copy(c.Deps).(map[string]any)
			}
			err := u.Apply(c)
			require.Equal(t, fail, m.apply(t, err, ops, op), "%s: failed: %v", op, err)
			if fail {
				// Besides the model's check: exactly as it was.
				kind = "failed update"
				require.Equal(t, before, stateOf(c), op)
				require.Equal(t, deps, c.Deps, op)
			}
		case x >= 112 && x < 116: // combined updates against the same one by one
			kind = "combine"
			var d *foldModel
			d, op = combineStep(t, r, g, m, fmt.Sprintf("c%d", clones+1))
			if len(models) < 4 {
				clones++
				models = append(models, d)
				touched = append(touched, d)
			} else {
				d.check(t, step)
			}
		case x >= 116: // serialize, restore and carry on with the restored context
			kind = "restore"
			overlay := m.overlay
			op = fmt.Sprintf("%s = Deserialize(%s.Serialize())", m.name, m.name)
			m.restore(t, op)
			if overlay != "" && r.IntN(2) == 0 {
				// The overlay comes from configuration: a runner sets it again.
				op += "; SetSystemPromptOverlay(" + strconv.Quote(overlay) + ")"
				m.c.SetSystemPromptOverlay(overlay)
				m.overlay = overlay
			}
		default: // patch dangling tool calls
			kind = "patch"
			// The model's rule: a call is answered by a result with its ID
			// among the tool messages that follow its message before any
			// other, each result answering one call; the missing results
			// go after those tool messages, in call order.
			type insert struct {
				at    int // the index in msgs of the entry they follow
				calls []nous.ToolCall
			}
			var inserts []insert
			for i := 0; i < len(m.msgs); i++ {
				if len(m.msgs[i].ToolCalls) == 0 {
					continue
				}
				end := i
				results := map[string]int{}
				for end+1 < len(m.msgs) && m.msgs[end+1].Role == nous.RoleTool {
					end++
					results[m.msgs[end].ToolCallID]++
				}
				var missing []nous.ToolCall
				used := map[string]bool{}
				for _, tc := range m.msgs[i].ToolCalls {
					if used[tc.ID] { // a second use of an ID opens no call
						continue
					}
					used[tc.ID] = true
					if results[tc.ID] > 0 {
						results[tc.ID]--
					} else {
						missing = append(missing, tc)
					}
				}
				if len(missing) > 0 {
					inserts = append(inserts, insert{end, missing})
				}
				i = end
			}
			want := 0
			for _, in := range inserts {
				want += len(in.calls)
			}
			op = fmt.Sprintf("%s.PatchDanglingToolCalls() (want %d)", m.name, want)
			needs := c.NeedsResponse
			require.Equal(t, want, c.PatchDanglingToolCalls(), op)
			require.Equal(t, needs, c.NeedsResponse, "%s: NeedsResponse is left alone", op)
			if want > 0 {
				view := c.Messages()[m.off():]
				shift := 0
				for _, in := range inserts {
					at := in.at + shift
					after := m.seqs[at]
					for k, tc := range in.calls {
						stamped := view[at+1+k].CreatedAt
						require.False(t, stamped.IsZero(), op)
						m.events = append(m.events, modelEvent{Type: nous.EventToolResult, After: after})
						after = int64(len(m.events))
						msg := nous.Message{
							Role: nous.RoleTool, ToolCallID: tc.ID, Name: tc.Name,
							Content:   "Tool call was interrupted and not executed. Please retry if needed.",
							Metadata:  map[string]any{"synthesized": true},
							CreatedAt: stamped, // the clock's; everything else is checked
						}
						m.msgs = slices.Insert(m.msgs, at+1+k, msg)
						m.seqs = slices.Insert(m.seqs, at+1+k, after)
					}
					shift += len(in.calls)
				}
			}
			for _, p := range modelPairing(m.msgs, true) {
				require.NotContains(t, p, "interrupted", "%s: a call is left without its result", op)
				require.NotContains(t, p, "unanswered", "%s: a call is left without its result", op)
			}
		}
		trace = append(trace, fmt.Sprintf("%d: %s", step, op))
		stats[kind]++
		full := step%4 == 3 || step == steps-1
		for _, x := range models {
			if full || slices.Contains(touched, x) {
				x.check(t, step)
			} else {
				x.checkQuick(t, step)
			}
		}
	}
}

// combineStep applies updates, combined, to m or to a clone of it, and one
// by one to the other, and checks that both get the same deps and events.
// It returns the clone's model and the operation's description.
func combineStep(t *testing.T, r *rand.Rand, g *modelGen, m *foldModel, name string) (*foldModel, string) {
	d := m.clone(name)
	n0 := len(m.events)
	k := 2 + r.IntN(3)
	failing := -1
	if r.IntN(6) == 0 {
		failing = r.IntN(k)
	}
	ops := make([][]reftest.Op, k)
	us := make([]nous.ContextUpdate, k)
	before := make([][]nous.Operation, k)
	var all []reftest.Op
	total := 0
	state := m.deps
	for i := range k {
		ops[i], state = g.update(state, i == failing)
		us[i] = nous.BuildForTest(ops[i])
		before[i] = us[i].Operations()
		all = append(all, ops[i]...)
		total += us[i].Len()
	}
	combined, separate := m, d
	if r.IntN(2) == 0 {
		combined, separate = d, m
	}
	op := fmt.Sprintf("%s := %s.Clone(); Combine(%v).Apply(%s), one by one on %s", d.name, m.name, ops, combined.name, separate.name)

	u := nous.Combine(us...)
	require.Equal(t, total, u.Len(), op)
	combined.apply(t, u.Apply(combined.c), all, op)
	for i := range us {
		separate.apply(t, us[i].Apply(separate.c), ops[i], fmt.Sprintf("%s: update %d", op, i))
	}
	for i := range us {
		require.Equal(t, before[i], us[i].Operations(), "%s: Combine changed update %d", op, i)
	}
	if failing < 0 {
		require.Equal(t, combined.c.Deps, separate.c.Deps, op)
		// The same events, but that the combined update records its deps
		// operations in one deps_update event, and each update apart in
		// its own, before its other events.
		a, b := combined.c.Log().Events()[n0:], separate.c.Log().Events()[n0:]
		depsA, restA := splitDepsEvents(a)
		depsB, restB := splitDepsEvents(b)
		if !slices.ContainsFunc(all, func(o reftest.Op) bool { return o.Kind == reftest.Merge }) {
			require.Equal(t, depsA, depsB, "%s: the deps operations recorded", op)
		} // else each records the values it made: the deps each log folds to are compared
		foldA, errA := combined.c.Log().Deps(int64(combined.c.Log().Len()))
		foldB, errB := separate.c.Log().Deps(int64(separate.c.Log().Len()))
		require.NoError(t, errA, op)
		require.NoError(t, errB, op)
		require.Equal(t, foldA, foldB, "%s: the deps the logs record", op)
		require.Equal(t, restA, restB, "%s: the other events", op)
	}
	return d, op
}

// splitDepsEvents returns the operations the deps_update events of events
// record, in order, and the type and data of every other event.
func splitDepsEvents(events []nous.Event) (ops []any, rest [][]any) {
	for _, e := range events {
		if e.Type == nous.EventDepsUpdate {
			list, _ := e.Data[nous.DataOps].([]any)
			ops = append(ops, list...)
			continue
		}
		rest = append(rest, []any{e.Type, e.Data})
	}
	return ops, rest
}

// modelCopy returns a deep copy of m, made without the package's own
// copy, with its CreatedAt in UTC as the context keeps it.
func modelCopy(m nous.Message) nous.Message {
	m = reftest.Copy(m).(nous.Message)
	if !m.CreatedAt.IsZero() {
		m.CreatedAt = m.CreatedAt.UTC()
	}
	return m
}

// TestFoldModelCheckCanFail makes sure the model's check is not vacuous: a
// context that differs from its model in any one respect fails it.
func TestFoldModelCheckCanFail(t *testing.T) {
	setup := []reftest.Op{
		{Kind: reftest.Set, Key: "m", Value: map[string]any{"x": map[string]any{"a": 1}}},
		{Kind: reftest.Append, Key: "list", Value: 1},
		{Kind: reftest.Set, Key: "API_Key", Value: "k"},
		{Kind: reftest.Log, Event: "turn_start", Data: map[string]any{"n": 1, "Token": "t"}},
	}
	good := func() *foldModel {
		m := newFoldModel("c", &modelWarnings{})
		for _, msg := range []nous.Message{mSystem("s"), mUser("u")} {
			require.NoError(t, m.c.AddMessage(msg))
			m.add(msg, "")
		}
		m.apply(t, nous.BuildForTest(setup).Apply(m.c), setup, "setup")
		return m
	}
	restored := func(m *foldModel) { m.restore(t, "restore") }
	apply := func(m *foldModel, ops ...reftest.Op) error { return nous.BuildForTest(ops).Apply(m.c) }

	// The model, kept right, passes: the breaks below fail for what they
	// break, not for what they share with it.
	m := good()
	m.check(t, 0)
	for _, ops := range [][]reftest.Op{
		{{Kind: reftest.Append, Key: "list", Value: 2}},
		{{Kind: reftest.Merge, Key: "m", Value: map[string]any{"x": map[string]any{"b": 2}}}},
		{{Kind: reftest.Set, Key: "a", Value: 1}, {Kind: reftest.Append, Key: "m", Value: 1}},
		{{Kind: reftest.Log, Event: "user_message"}, {Kind: reftest.Log, Event: "tool_call", Data: map[string]any{"n": 1}}},
	} {
		m.apply(t, apply(m, ops...), ops, fmt.Sprint(ops))
		m.check(t, 0)
	}
	m.c.SetSystemPromptOverlay("o")
	m.overlay = "o"
	restored(m)
	m.check(t, 0)
	breaks := map[string]func(m *foldModel){
		"a message more":     func(m *foldModel) { _ = m.c.AddMessage(mUser("x")) },
		"a bookkeeping more": func(m *foldModel) { _ = m.c.LogEvent(nous.EventTurnEnd, nil) },
		"overlay":            func(m *foldModel) { m.c.SetSystemPromptOverlay("o") },
		"model overlay":      func(m *foldModel) { m.overlay = "o" },
		"needs response":     func(m *foldModel) { m.c.NeedsResponse = false },
		"message text":       func(m *foldModel) { m.msgs[1].Content = "other" },
		"message time":       func(m *foldModel) { m.msgs[1].CreatedAt = time.Time{} },
		"event type":         func(m *foldModel) { m.events[0].Type = nous.EventUserMessage },
		"event data":         func(m *foldModel) { m.events[0].Data = map[string]any{} },
		"replaced":           func(m *foldModel) { _ = m.c.ReplaceMessage(1, mUser("u")) },

		// The deps, and a model that gets one operation wrong.
		"context deps":        func(m *foldModel) { m.c.Deps["a"] = 1 },
		"nested context deps": func(m *foldModel) { m.c.Deps["m"].(map[string]any)["x"].(map[string]any)["a"] = 2 },
		"model deps":          func(m *foldModel) { m.deps["list"] = []any{1, 1} },
		"append prepends": func(m *foldModel) {
			_ = apply(m, reftest.Op{Kind: reftest.Append, Key: "list", Value: 2})
			m.deps["list"] = []any{2, 1}
		},
		"shallow merge": func(m *foldModel) {
			_ = apply(m, reftest.Op{Kind: reftest.Merge, Key: "m", Value: map[string]any{"x": map[string]any{"b": 2}}})
			m.deps["m"] = map[string]any{"x": map[string]any{"b": 2}}
		},
		"failed update half applied": func(m *foldModel) {
			_ = apply(m, reftest.Op{Kind: reftest.Set, Key: "a", Value: 1}, reftest.Op{Kind: reftest.Append, Key: "m", Value: 1})
			m.deps["a"] = 1
		},
		"refused log event logged": func(m *foldModel) {
			_ = apply(m, reftest.Op{Kind: reftest.Log, Event: "user_message"})
			m.events = append(m.events, modelEvent{Type: nous.EventUserMessage})
			m.warns.want++
		},
		"drop without a warning": func(m *foldModel) {
			_ = apply(m, reftest.Op{Kind: reftest.Log, Event: "replace"})
		},
		"update event data": func(m *foldModel) {
			_ = apply(m, reftest.Op{Kind: reftest.Log, Event: "tool_call", Data: map[string]any{"n": 1}})
			m.events = append(m.events, modelEvent{Type: nous.EventToolCall, Data: map[string]any{"n": 2}})
		},

		// A restore the model gets wrong.
		"overlay kept by the model": func(m *foldModel) {
			m.c.SetSystemPromptOverlay("o")
			m.overlay = "o"
			restored(m)
			m.overlay = "o"
		},
		"overlay kept by the context": func(m *foldModel) {
			restored(m)
			m.c.SetSystemPromptOverlay("o")
		},
		"deps not redacted": func(m *foldModel) {
			deps := reftest.Copy(m.deps).(map[string]any)
			restored(m)
			m.deps = deps
		},
		"event data not redacted": func(m *foldModel) {
			events := slices.Clone(m.events)
			restored(m)
			m.events = events
		},
		"restored deps lost": func(m *foldModel) {
			restored(m)
			m.c.Deps = map[string]any{}
		},
		"restored with a new log": func(m *foldModel) {
			restored(m)
			m.c = m.c.Clone()
		},
		"restored one event short": func(m *foldModel) {
			restored(m)
			m.events = append(m.events, modelEvent{Type: nous.EventTurnEnd})
		},
	}
	for name, br := range breaks {
		t.Run(name, func(t *testing.T) {
			m := good()
			br(m)
			var rec failRecorder
			done := make(chan struct{})
			go func() {
				defer close(done)
				m.check(&rec, 1)
			}()
			<-done
			require.True(t, rec.failed, "the check missed it")
		})
	}
}

// modelPairing returns the pairing problems of a view, each as the call ID
// and what is wrong, by the rule written another way than the package's: the
// view is cut into segments, each a message that is not a tool result and
// the tool results after it; a segment's results answer its calls. Calls
// left open at the end of the view count only when end is true.
func modelPairing(view []nous.Message, end bool) []string {
	var problems []string
	var open []string
	started := false
	for _, msg := range view {
		if msg.Role == nous.RoleTool {
			if i := slices.Index(open, msg.ToolCallID); i >= 0 {
				open = slices.Delete(open, i, i+1)
			} else {
				problems = append(problems, msg.ToolCallID+": orphan")
			}
			continue
		}
		if started {
			for _, id := range open {
				problems = append(problems, id+": interrupted")
			}
		}
		started, open = true, nil
		seen := map[string]bool{}
		for _, tc := range msg.ToolCalls {
			if seen[tc.ID] {
				problems = append(problems, tc.ID+": duplicate")
				continue
			}
			seen[tc.ID] = true
			open = append(open, tc.ID)
		}
	}
	if end {
		for _, id := range open {
			problems = append(problems, id+": unanswered")
		}
	}
	return problems
}

// modelBreaksPairing reports whether after has a pairing problem, by call
// and kind, that before does not, but for those in allowed.
func modelBreaksPairing(before, after []nous.Message, allowed []string) bool {
	have := modelPairing(before, true)
	for _, p := range modelPairing(after, true) {
		if slices.Contains(allowed, p) {
			continue
		}
		i := slices.Index(have, p)
		if i < 0 {
			return true
		}
		have = slices.Delete(have, i, i+1)
	}
	return false
}
