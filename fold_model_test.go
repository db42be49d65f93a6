package nous_test

import (
	"encoding/json"
	"flag"
	"fmt"
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
)

// The model-based test of the fold: long random sequences of every operation
// that changes a context, each applied both to a Context and to a plain
// model (a []Message, the seqs of the events behind it, the events expected
// in the log, the overlay and NeedsResponse), compared after every step.
//
// Replay a failure with the seed it prints:
//
//	go test -run TestFoldModel -nous.seed=N .

// The flag may be registered by another test of the package too (the
// differential tests share it); register it only once.
var _ = func() bool {
	if flag.Lookup("nous.seed") == nil {
		flag.Uint64("nous.seed", 0, "seed of the model-based and differential tests (0: a fixed seed and a random one)")
	}
	return true
}()

// modelSeeds returns the seed given with -nous.seed, or a fixed seed and a
// random one.
func modelSeeds(t *testing.T) []uint64 {
	if f := flag.Lookup("nous.seed"); f != nil {
		if s, err := strconv.ParseUint(f.Value.String(), 10, 64); err == nil && s != 0 {
			return []uint64{s}
		}
	}
	return []uint64{20250101, rand.Uint64()}
}

// modelEvent is what the model expects of one event of the log.
type modelEvent struct {
	Type        nous.EventType
	Data        map[string]any
	First, Last int64
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
}

func (m *foldModel) clone(name string) *foldModel {
	d := &foldModel{name: name, c: m.c.Clone(), overlay: m.overlay, needsResponse: m.needsResponse}
	for _, msg := range m.msgs {
		d.msgs = append(d.msgs, modelCopy(msg))
	}
	d.seqs = slices.Clone(m.seqs)
	d.events = slices.Clone(m.events) // their Data are never written
	d.logID = d.c.Log().ID().String()
	return d
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
		got := modelEvent{Type: e.Type, Data: e.Data, First: e.First, Last: e.Last}
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
	require.Equal(t, nonNil(overlaid(m.msgs, m.overlay, view)), nonNil(view), "%s: the view", where)
	require.Equal(t, len(view), c.Len(), where)
	if m.off() == 1 {
		require.False(t, view[0].CreatedAt.IsZero(), where)
	}

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
	require.Equal(t, m.overlay, c.SystemPromptOverlay(), where)
	require.Equal(t, m.logID, c.Log().ID().String(), where)
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
	return nous.Message{Role: nous.RoleAssistant, ToolCalls: []nous.ToolCall{{ID: "c", Arguments: json.RawMessage(`[1]`)}}}
}

func TestFoldModel(t *testing.T) {
	steps, runs := 300, 2
	if testing.Short() {
		steps, runs = 100, 1
	}
	for _, seed := range modelSeeds(t) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d; replay with: go test -run TestFoldModel -nous.seed=%d .", seed, seed)
			r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			for run := range runs {
				runFoldModel(t, r, run, steps)
			}
		})
	}
}

func runFoldModel(t *testing.T, r *rand.Rand, run, steps int) {
	g := &modelGen{r: r}
	first := &foldModel{name: "c0", c: nous.NewContext(), needsResponse: true}
	first.logID = first.c.Log().ID().String()
	models := []*foldModel{first}
	var trace []string
	defer func() {
		if t.Failed() {
			k := max(0, len(trace)-40)
			t.Logf("run %d, last operations:\n%s", run, strings.Join(trace[k:], "\n"))
		}
	}()
	clones := 0
	if r.IntN(2) == 0 {
		// Half the runs start the way most conversations do.
		sys := nous.Message{Role: nous.RoleSystem, Content: "system prompt", CreatedAt: at(0)}
		require.NoError(t, first.c.AddMessage(sys))
		first.add(sys, "")
	}

	for step := range steps {
		m := models[r.IntN(len(models))]
		c := m.c
		var op string
		switch x := r.IntN(100); {
		case x < 30: // add one
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
				scribbleMessage(&msg)
			}
		case x < 40: // add a batch, sometimes with an invalid message in it
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
				scribbleMessage(&batch[i])
			}
		case x < 45: // an invalid single message
			op = m.name + ".AddMessage(invalid)"
			require.ErrorIs(t, c.AddMessage(g.invalid()), nous.ErrInvalidMessage, op)
		case x < 55: // a bookkeeping event, or a refused one
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
				m.events = append(m.events, modelEvent{Type: typ, Data: jsonCopyMap(data)})
				scribbleMap(data)
			} else {
				require.Error(t, err, op)
			}
		case x < 72: // replace a range (often a single message, sometimes out of range)
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
			switch {
			case first < m.off() || last >= n || first < 0:
				require.ErrorIs(t, err, nous.ErrOutOfRange, op)
			case invalid:
				require.ErrorIs(t, err, nous.ErrInvalidMessage, op)
			default:
				require.NoError(t, err, op)
				f, z := first-m.off(), last-m.off()
				rep := modelCopy(msg)
				rep.CreatedAt = m.msgs[f].CreatedAt
				m.events = append(m.events, modelEvent{Type: nous.EventReplace, First: m.seqs[f], Last: m.seqs[z]})
				m.msgs = slices.Replace(m.msgs, f, z+1, rep)
				m.seqs = slices.Replace(m.seqs, f, z+1, int64(len(m.events)))
			}
			scribbleMessage(&msg)
		case x < 80: // the overlay
			text := []string{"", "", "overlay A", "overlay B\nline two"}[r.IntN(4)]
			op = fmt.Sprintf("%s.SetSystemPromptOverlay(%q)", m.name, text)
			c.SetSystemPromptOverlay(text)
			m.overlay = text
		case x < 86: // clone, then both diverge
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
		default: // patch dangling tool calls
			answered := map[string]bool{}
			for _, msg := range m.msgs {
				if msg.Role == nous.RoleTool {
					answered[msg.ToolCallID] = true
				}
			}
			var patches []nous.ToolCall
			for _, msg := range m.msgs {
				for _, tc := range msg.ToolCalls {
					if !answered[tc.ID] {
						answered[tc.ID] = true
						patches = append(patches, tc)
					}
				}
			}
			op = fmt.Sprintf("%s.PatchDanglingToolCalls() (want %d)", m.name, len(patches))
			require.Equal(t, len(patches), c.PatchDanglingToolCalls(), op)
			if len(patches) > 0 {
				view := c.Messages()
				stamped := view[len(view)-len(patches):]
				for i, tc := range patches {
					require.False(t, stamped[i].CreatedAt.IsZero(), op)
					m.add(nous.Message{
						Role: nous.RoleTool, ToolCallID: tc.ID, Name: tc.Name,
						Content:   "Tool call was interrupted and not executed. Please retry if needed.",
						Metadata:  map[string]any{"synthesized": true},
						CreatedAt: stamped[i].CreatedAt, // the clock's; everything else is checked
					}, "")
				}
			}
		}
		trace = append(trace, fmt.Sprintf("%d: %s", step, op))
		for _, x := range models {
			x.check(t, step)
		}
	}
}

// modelCopy returns a deep copy of m, made without the package's own copy.
func modelCopy(m nous.Message) nous.Message {
	if m.Parts != nil {
		ps := make([]nous.ContentPart, len(m.Parts))
		for i, p := range m.Parts {
			p.Options = jsonCopyMap(p.Options)
			ps[i] = p
		}
		m.Parts = ps
	}
	if m.ToolCalls != nil {
		tcs := make([]nous.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			if tc.Arguments != nil {
				tc.Arguments = append(json.RawMessage{}, tc.Arguments...)
			}
			tc.Metadata = jsonCopyMap(tc.Metadata)
			tcs[i] = tc
		}
		m.ToolCalls = tcs
	}
	m.Metadata = jsonCopyMap(m.Metadata)
	if !m.CreatedAt.IsZero() {
		m.CreatedAt = m.CreatedAt.UTC()
	}
	return m
}

func jsonCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonCopyValue(v)
	}
	return out
}

func jsonCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return jsonCopyMap(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonCopyValue(e)
		}
		return out
	}
	return v
}

// TestFoldModelCheckCanFail makes sure the model's check is not vacuous: a
// context that differs from its model in any one respect fails it.
func TestFoldModelCheckCanFail(t *testing.T) {
	good := func() *foldModel {
		c := nous.NewContext()
		m := &foldModel{name: "c", c: c, needsResponse: true, logID: c.Log().ID().String()}
		for _, msg := range []nous.Message{mSystem("s"), mUser("u")} {
			require.NoError(t, c.AddMessage(msg))
			m.add(msg, "")
		}
		return m
	}
	good().check(t, 0)
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
