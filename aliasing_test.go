package nous_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// The tests of this file hand the package a slice or a map, or take one from
// it, then write into it every way a caller could (elements, nested maps,
// raw argument bytes, the spare capacity behind a slice's length) and check
// that the context, its log and every other view are exactly as before.

// scribbleMap writes into m and every map and list reachable from it.
func scribbleMap(m map[string]any) {
	if m == nil {
		return
	}
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			scribbleMap(v)
		case []any:
			scribbleList(v)
		default:
			m[k] = "scribbled"
		}
	}
	m["scribbled"] = true
}

func scribbleList(l []any) {
	for i, e := range l {
		if m, ok := e.(map[string]any); ok {
			scribbleMap(m)
		} else {
			l[i] = "scribbled"
		}
	}
	full := l[:cap(l)]
	for i := len(l); i < len(full); i++ {
		full[i] = "spare"
	}
}

// scribbleSpare writes into the spare capacity of s.
func scribbleSpare[T any](s []T, v T) {
	full := s[:cap(s)]
	for i := len(s); i < len(full); i++ {
		full[i] = v
	}
}

// scribbleMessage writes into every field, map and slice of *m.
func scribbleMessage(m *nous.Message) {
	m.Role, m.Content, m.Name, m.ToolCallID, m.ReasoningContent = "scribbled", "scribbled", "scribbled", "scribbled", "scribbled"
	for i := range m.Parts {
		m.Parts[i].Content = "scribbled"
		m.Parts[i].Type = "scribbled"
		scribbleMap(m.Parts[i].Options)
	}
	scribbleSpare(m.Parts, nous.TextPart("spare"))
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		tc.ID, tc.Name = "scribbled", "scribbled"
		for j := range tc.Arguments {
			tc.Arguments[j] = 'X'
		}
		scribbleSpare(tc.Arguments, 'X')
		scribbleMap(tc.Metadata)
	}
	scribbleSpare(m.ToolCalls, nous.ToolCall{ID: "spare"})
	scribbleMap(m.Metadata)
}

func scribbleEvent(e *nous.Event) {
	e.Seq, e.Type, e.First, e.Last = -1, "scribbled", -1, -1
	scribbleMap(e.Data)
	if e.Message != nil {
		scribbleMessage(e.Message)
	}
}

// aliasingContext returns a context whose view and log hold maps and slices
// everywhere: full messages, a source, bookkeeping data, a replacement and an
// overlay joined to a system message with parts.
func aliasingContext(t *testing.T) *nous.Context {
	c := nous.NewContext(nous.WithDeps(map[string]any{"m": map[string]any{"k": []any{1, map[string]any{"x": 1}}}}))
	sys := nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{{Type: nous.PartText, Content: "sys", Options: map[string]any{"cache": map[string]any{"ttl": 5}}}}, Metadata: map[string]any{"s": 1}, CreatedAt: t0}
	require.NoError(t, c.AddMessage(sys))
	require.NoError(t, c.AddMessage(fullMessage(), nous.WithSource("memory")))
	require.NoError(t, c.LogEvent(nous.EventToolCall, map[string]any{"call": map[string]any{"id": "c1"}, "list": []any{1, 2}}))
	require.NoError(t, c.AddMessage(fullMessage()))
	require.NoError(t, c.ReplaceMessage(2, fullMessage()))
	require.NoError(t, c.AddMessage(mUser("u")))
	c.SetSystemPromptOverlay("overlay")
	return c
}

func TestAliasingInputs(t *testing.T) {
	tests := []struct {
		name string
		// run gives the context something, then scribbles over it.
		run func(t *testing.T, c *nous.Context)
	}{
		{"AddMessage", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			require.NoError(t, c.AddMessage(m))
			scribbleMessage(&m)
		}},
		{"AddMessage with spare capacity", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			m.Parts = append(make([]nous.ContentPart, 0, 16), m.Parts...)
			m.ToolCalls = append(make([]nous.ToolCall, 0, 16), m.ToolCalls...)
			m.ToolCalls[0].Arguments = append(make(json.RawMessage, 0, 64), m.ToolCalls[0].Arguments...)
			require.NoError(t, c.AddMessage(m))
			scribbleMessage(&m)
		}},
		{"AddMessages", func(t *testing.T, c *nous.Context) {
			ms := []nous.Message{fullMessage(), fullMessage()}
			require.NoError(t, c.AddMessages(ms...))
			scribbleMessage(&ms[0])
			ms[1] = mUser("swapped")
		}},
		{"ReplaceMessage", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			require.NoError(t, c.ReplaceMessage(c.Len()-1, m))
			scribbleMessage(&m)
		}},
		{"ReplaceMessageRange", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			require.NoError(t, c.ReplaceMessageRange(1, 2, m))
			scribbleMessage(&m)
		}},
		{"LogEvent", func(t *testing.T, c *nous.Context) {
			data := map[string]any{"a": 1, "nested": map[string]any{"b": []any{2, map[string]any{"c": 3}}}}
			require.NoError(t, c.LogEvent(nous.EventRequestHeader, data))
			scribbleMap(data)
		}},
		{"AddToolCall", func(t *testing.T, c *nous.Context) {
			call := fullMessage().ToolCalls[0]
			c.AddToolCall(call)
			call.ID = "scribbled"
			call.Arguments[0] = 'X'
			scribbleMap(call.Metadata)
		}},
		{"MergeDeps", func(t *testing.T, c *nous.Context) {
			deps := map[string]any{"new": map[string]any{"a": []any{1, map[string]any{"b": 2}}}}
			c.MergeDeps(deps)
			scribbleMap(deps)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := aliasingContext(t)
			// Run the same operation with an input nobody scribbles on: the
			// result is what c must hold.
			want := aliasingContext(t)
			tt.run(t, c)
			before := stateOf(c)
			toolCalls, deps := aliasDeepCopy(c.ToolCalls), aliasDeepCopy(c.Deps)

			// Do it again on want, without scribbling; compare views.
			tt.run(t, want)
			assert.Equal(t, withoutTimes(stateOf(want)), withoutTimes(before))
			// And nothing changed since.
			assert.Equal(t, before, stateOf(c))
			assert.Equal(t, toolCalls, aliasDeepCopy(c.ToolCalls))
			assert.Equal(t, deps, aliasDeepCopy(c.Deps))
			requireFolds(t, c)
		})
	}
}

// TestAliasingInputsDirect checks the inputs against values built afresh,
// so a copy that shares with its input cannot hide behind a snapshot taken
// after the damage.
func TestAliasingInputsDirect(t *testing.T) {
	t.Run("AddMessage", func(t *testing.T) {
		c := nous.NewContext()
		m := fullMessage()
		require.NoError(t, c.AddMessage(m, nous.WithSource("kb")))
		scribbleMessage(&m)
		assert.Equal(t, []nous.Message{fullMessage()}, c.Messages())
		assert.Equal(t, fullMessage(), *c.Log().Events()[0].Message)
		assert.Equal(t, []nous.Message{fullMessage()}, mustFold(t, c))
	})
	t.Run("AddMessages and its slice", func(t *testing.T) {
		c := nous.NewContext()
		ms := []nous.Message{fullMessage(), mUser("u")}
		require.NoError(t, c.AddMessages(ms...))
		scribbleMessage(&ms[0])
		ms[1].Content = "scribbled"
		assert.Equal(t, []nous.Message{fullMessage(), mUser("u")}, c.Messages())
	})
	t.Run("WithMessages", func(t *testing.T) {
		ms := []nous.Message{fullMessage()}
		c := nous.NewContext(nous.WithMessages(ms...))
		scribbleMessage(&ms[0])
		assert.Equal(t, []nous.Message{fullMessage()}, c.Messages())
	})
	t.Run("ReplaceMessage", func(t *testing.T) {
		c := nous.NewContext()
		mustAddAll(t, c, mUser("u"))
		m := fullMessage()
		require.NoError(t, c.ReplaceMessage(0, m))
		scribbleMessage(&m)
		want := fullMessage()
		assert.Equal(t, []nous.Message{want}, c.Messages())
		assert.Equal(t, []nous.Message{want}, mustFold(t, c))
	})
	t.Run("LogEvent", func(t *testing.T) {
		c := nous.NewContext()
		data := map[string]any{"a": 1, "nested": map[string]any{"b": []any{2, map[string]any{"c": 3}}}}
		require.NoError(t, c.LogEvent(nous.EventTurnStart, data))
		scribbleMap(data)
		assert.Equal(t, map[string]any{"a": 1, "nested": map[string]any{"b": []any{2, map[string]any{"c": 3}}}}, c.Log().Events()[0].Data)
	})
	t.Run("AddToolCall", func(t *testing.T) {
		c := nous.NewContext()
		call := fullMessage().ToolCalls[0]
		c.AddToolCall(call)
		call.Arguments[0] = 'X'
		scribbleMap(call.Metadata)
		assert.Equal(t, []nous.ToolCall{fullMessage().ToolCalls[0]}, c.ToolCalls)
	})
	t.Run("MergeDeps and WithDeps", func(t *testing.T) {
		deps := map[string]any{"a": map[string]any{"b": []any{1, map[string]any{"c": 2}}}}
		want := map[string]any{"a": map[string]any{"b": []any{1, map[string]any{"c": 2}}}}
		c := nous.NewContext(nous.WithDeps(deps))
		d := nous.NewContext()
		d.MergeDeps(deps)
		scribbleMap(deps)
		assert.Equal(t, want, c.Deps)
		assert.Equal(t, want, d.Deps)
	})
	t.Run("NewRunContext and FromRunContext", func(t *testing.T) {
		deps := map[string]any{"a": map[string]any{"b": []any{1}}}
		rc := nous.NewRunContext(deps)
		c := nous.FromRunContext(rc)
		scribbleMap(deps)
		assert.Equal(t, map[string]any{"a": map[string]any{"b": []any{1}}}, rc.Deps)
		scribbleMap(rc.Deps)
		assert.Equal(t, map[string]any{"a": map[string]any{"b": []any{1}}}, c.Deps)
	})
	t.Run("WithSandbox", func(t *testing.T) {
		p := nous.SandboxPolicy{Mode: nous.SandboxWorkspaceWrite, WritableRoots: make([]string, 1, 4)}
		p.WritableRoots[0] = "/work"
		rc := nous.NewRunContext(nil, nous.WithSandbox(p))
		c := nous.NewContext()
		rc2 := c.ToRunContext(nous.WithSandbox(p))
		p.WritableRoots[0] = "/"
		p.Mode = nous.SandboxFullAccess
		scribbleSpare(p.WritableRoots, "/etc")
		for _, got := range []nous.RunContext{rc, rc2} {
			assert.Equal(t, &nous.SandboxPolicy{Mode: nous.SandboxWorkspaceWrite, WritableRoots: []string{"/work"}}, got.Sandbox)
			scribbleSpare(got.Sandbox.WritableRoots, "/etc")
		}
		assert.Equal(t, []string{"/work"}, rc.Sandbox.WritableRoots)
		assert.NotSame(t, rc.Sandbox, rc2.Sandbox)
	})
	t.Run("WithCallbacks", func(t *testing.T) {
		cbs := map[string]nous.Callback{"a": func(string, any) {}}
		c := nous.NewContext(nous.WithCallbacks(cbs))
		delete(cbs, "a")
		cbs["b"] = nil
		assert.Len(t, c.Callbacks, 1)
		assert.Contains(t, c.Callbacks, "a")
		d := c.Clone()
		d.Callbacks["z"] = nil
		assert.NotContains(t, c.Callbacks, "z")
	})
	t.Run("constructors", func(t *testing.T) {
		parts := []nous.ContentPart{nous.TextPart("a")}
		calls := []nous.ToolCall{{ID: "c1"}}
		u := nous.UserMessageParts(parts...)
		a := nous.AssistantMessage("", calls...)
		parts[0] = nous.TextPart("scribbled")
		calls[0] = nous.ToolCall{ID: "scribbled"}
		assert.Equal(t, "a", u.Parts[0].Content)
		assert.Equal(t, "c1", a.ToolCalls[0].ID)
	})
	t.Run("Fold", func(t *testing.T) {
		c := aliasingContext(t)
		events := c.Log().Events()
		want := mustFold(t, c)
		got, err := nous.Fold(events)
		require.NoError(t, err)
		for i := range events {
			scribbleEvent(&events[i])
		}
		assert.Equal(t, want, got, "Fold's result does not share with its input")
		for i := range got {
			scribbleMessage(&got[i])
		}
		assert.Equal(t, want, mustFold(t, c))
	})
}

func TestAliasingOutputs(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, c *nous.Context)
	}{
		{"Messages", func(t *testing.T, c *nous.Context) {
			ms := c.Messages()
			for i := range ms {
				scribbleMessage(&ms[i])
			}
			scribbleSpare(ms, mUser("spare"))
			_ = append(ms, mUser("appended"))
		}},
		{"Messages resliced to zero and appended", func(t *testing.T, c *nous.Context) {
			ms := c.Messages()
			ms = append(ms[:0], mUser("evil"), mUser("evil"))
			scribbleMessage(&ms[0])
		}},
		{"LastMessage", func(t *testing.T, c *nous.Context) {
			m, _ := c.LastMessage()
			scribbleMessage(&m)
		}},
		{"AssistantMessages", func(t *testing.T, c *nous.Context) {
			ms := c.AssistantMessages()
			for i := range ms {
				scribbleMessage(&ms[i])
			}
			scribbleSpare(ms, mUser("spare"))
			_ = append(ms, mUser("appended"))
		}},
		{"Log().Events", func(t *testing.T, c *nous.Context) {
			es := c.Log().Events()
			for i := range es {
				scribbleEvent(&es[i])
			}
			scribbleSpare(es, nous.Event{Seq: 99})
			_ = append(es, nous.Event{Seq: 99})
		}},
		{"Log().Event", func(t *testing.T, c *nous.Context) {
			for seq := int64(1); seq <= int64(c.Log().Len()); seq++ {
				e, _ := c.Log().Event(seq)
				scribbleEvent(&e)
			}
		}},
		{"Log().All", func(t *testing.T, c *nous.Context) {
			for e := range c.Log().All() {
				scribbleEvent(&e)
			}
		}},
		{"All, appending onto yielded slices", func(t *testing.T, c *nous.Context) {
			// All shares maps and slices with the log and documents them as
			// read-only; appending onto them is still harmless.
			for _, m := range c.All() {
				_ = append(m.Parts, nous.TextPart("appended"))
				_ = append(m.ToolCalls, nous.ToolCall{ID: "appended"})
				scribbleSpare(m.Parts, nous.TextPart("spare"))
				scribbleSpare(m.ToolCalls, nous.ToolCall{ID: "spare"})
				for _, tc := range m.ToolCalls {
					scribbleSpare(tc.Arguments, 'X')
				}
			}
		}},
		{"Fold", func(t *testing.T, c *nous.Context) {
			ms, _ := nous.Fold(c.Log().Events())
			for i := range ms {
				scribbleMessage(&ms[i])
			}
		}},
		{"ToRunContext", func(t *testing.T, c *nous.Context) {
			rc := c.ToRunContext()
			scribbleMap(rc.Deps)
		}},
		{"Clone", func(t *testing.T, c *nous.Context) {
			d := c.Clone()
			ms := d.Messages()
			for i := range ms {
				scribbleMessage(&ms[i])
			}
			scribbleMap(d.Deps)
			for i := range d.ToolCalls {
				scribbleMap(d.ToolCalls[i].Metadata)
				d.ToolCalls[i].Arguments[0] = 'X'
			}
			_ = d.ReplaceMessageRange(1, d.Len()-1, mUser("d"))
			mustAddAll(t, d, mUser("d"))
			d.SetSystemPromptOverlay("d")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := aliasingContext(t)
			c.AddToolCall(fullMessage().ToolCalls[0])
			want := aliasingContext(t)
			want.AddToolCall(fullMessage().ToolCalls[0])
			tt.run(t, c)
			assert.Equal(t, withoutTimes(stateOf(want)), withoutTimes(stateOf(c)))
			assert.Equal(t, want.Deps, c.Deps)
			assert.Equal(t, want.ToolCalls, c.ToolCalls)
			requireFolds(t, c)
		})
	}
}

// TestAliasingOverlayLead checks the message the overlay builds: it is made
// from the log's first message and must share nothing a caller can reach.
func TestAliasingOverlayLead(t *testing.T) {
	c := nous.NewContext()
	sys := nous.Message{Role: nous.RoleSystem, Content: "S", Parts: []nous.ContentPart{nous.TextPart("p")}, Metadata: map[string]any{"k": map[string]any{"v": 1}}, CreatedAt: t0}
	require.NoError(t, c.AddMessage(sys))
	c.SetSystemPromptOverlay("O")
	m := c.Messages()[0]
	scribbleMessage(&m)
	l, _ := c.LastMessage()
	scribbleMessage(&l)
	want := sys
	want.Content = "S\n\nO"
	want.Metadata = map[string]any{"k": map[string]any{"v": 1}}
	want.Parts = []nous.ContentPart{nous.TextPart("p")}
	assert.Equal(t, []nous.Message{want}, c.Messages())
	want.Content = "S"
	assert.Equal(t, []nous.Message{want}, mustFold(t, c))
}

// TestAliasingClonesDoNotShareSpareCapacity makes two clones of one context
// at the same length and lets all three append: each must see only its own
// appends, however the log and view share their storage.
func TestAliasingClonesDoNotShareSpareCapacity(t *testing.T) {
	for _, n := range []int{1, 3, 5, 8, 12, 100} {
		c := nous.NewContext()
		for range n {
			mustAddAll(t, c, mUser("base"))
		}
		d, e := c.Clone(), c.Clone()
		for i, x := range []*nous.Context{c, d, e} {
			name := string(rune('c' + i))
			for range 4 {
				mustAddAll(t, x, mUser(name))
			}
			require.NoError(t, x.ReplaceMessage(x.Len()-1, mUser(name+"!")))
		}
		for i, x := range []*nous.Context{c, d, e} {
			name := string(rune('c' + i))
			texts := viewTexts(x)
			require.Len(t, texts, n+4, "n=%d %s", n, name)
			assert.Equal(t, []string{name, name, name, name + "!"}, texts[n:], "n=%d %s", n, name)
			requireFolds(t, x)
		}
	}
}

// withoutTimes zeroes the creation times that an operation stamps with the
// clock, so that two runs of it compare equal.
func withoutTimes(s ctxState) ctxState {
	s.Messages = append([]nous.Message(nil), s.Messages...)
	for i := range s.Messages {
		if s.Messages[i].CreatedAt.After(t0.Add(1000 * 1e9)) {
			s.Messages[i].CreatedAt = t0
		}
	}
	s.Events = append([]nous.Event(nil), s.Events...)
	for i := range s.Events {
		s.Events[i].CreatedAt = t0
		if m := s.Events[i].Message; m != nil && m.CreatedAt.After(t0.Add(1000*1e9)) {
			cp := *m
			cp.CreatedAt = t0
			s.Events[i].Message = &cp
		}
	}
	return s
}

// aliasDeepCopy returns a copy of v that shares no map or slice with it, for
// the JSON-shaped values of deps and tool calls.
func aliasDeepCopy[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// TestAliasingOverlayPartsOfClones gives a context and its clone different
// overlays on one leading system message made of parts. Both overlays are
// built from the same logged message; neither may write where the other
// reads, whatever spare capacity the logged parts have.
func TestAliasingOverlayPartsOfClones(t *testing.T) {
	for n := 1; n <= 40; n++ {
		parts := make([]nous.ContentPart, n)
		for i := range parts {
			parts[i] = nous.TextPart("p")
		}
		c := nous.NewContext()
		mustAddAll(t, c, nous.Message{Role: nous.RoleSystem, Parts: parts, CreatedAt: t0})
		d := c.Clone()
		c.SetSystemPromptOverlay("C")
		d.SetSystemPromptOverlay("D")
		e := d.Clone()
		e.SetSystemPromptOverlay("E")
		for _, x := range []struct {
			c    *nous.Context
			want string
		}{{c, "C"}, {d, "D"}, {e, "E"}} {
			ps := x.c.Messages()[0].Parts
			require.Len(t, ps, n+1, "n=%d", n)
			assert.Equal(t, x.want, ps[n].Content, "n=%d", n)
			got := ""
			for _, m := range x.c.All() {
				got = m.Parts[n].Content
			}
			assert.Equal(t, x.want, got, "n=%d: All", n)
			requireFolds(t, x.c)
		}
	}
}
