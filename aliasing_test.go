package nous_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
)

// The tests of this file hand the package a slice or a map, or take one from
// it, then write into it every way a caller could (reftest.Scribble:
// elements, nested maps, raw argument bytes, the spare capacity behind a
// slice's length) and check that the context, its log and every other view
// are exactly as before.

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
			reftest.Scribble(&m)
		}},
		{"AddMessage with spare capacity", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			m.Parts = append(make([]nous.ContentPart, 0, 16), m.Parts...)
			m.ToolCalls = append(make([]nous.ToolCall, 0, 16), m.ToolCalls...)
			m.ToolCalls[0].Arguments = append(make(json.RawMessage, 0, 64), m.ToolCalls[0].Arguments...)
			require.NoError(t, c.AddMessage(m))
			reftest.Scribble(&m)
		}},
		{"AddMessages", func(t *testing.T, c *nous.Context) {
			ms := []nous.Message{fullMessage(), fullMessage()}
			require.NoError(t, c.AddMessages(ms...))
			reftest.Scribble(&ms[0])
			ms[1] = mUser("swapped")
		}},
		{"ReplaceMessage", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			require.NoError(t, c.ReplaceMessage(c.Len()-1, m))
			reftest.Scribble(&m)
		}},
		{"ReplaceMessageRange", func(t *testing.T, c *nous.Context) {
			m := fullMessage()
			require.NoError(t, c.ReplaceMessageRange(1, 2, m))
			reftest.Scribble(&m)
		}},
		{"LogEvent", func(t *testing.T, c *nous.Context) {
			data := map[string]any{"a": 1, "nested": map[string]any{"b": []any{2, map[string]any{"c": 3}}}}
			require.NoError(t, c.LogEvent(nous.EventRequestHeader, data))
			reftest.Scribble(data)
		}},
		{"AddToolCall", func(t *testing.T, c *nous.Context) {
			call := fullMessage().ToolCalls[0]
			c.AddToolCall(call)
			call.ID = "scribbled"
			call.Arguments[0] = 'X'
			reftest.Scribble(call.Metadata)
		}},
		{"MergeDeps", func(t *testing.T, c *nous.Context) {
			deps := map[string]any{"new": map[string]any{"a": []any{1, map[string]any{"b": 2}}}}
			c.MergeDeps(deps)
			reftest.Scribble(deps)
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
			toolCalls, deps := reftest.Copy(c.ToolCalls), reftest.Copy(c.Deps)

			// Do it again on want, without scribbling; compare views.
			tt.run(t, want)
			assert.Equal(t, withoutTimes(stateOf(want)), withoutTimes(before))
			// And nothing changed since.
			assert.Equal(t, before, stateOf(c))
			assert.Equal(t, toolCalls, reftest.Copy(c.ToolCalls))
			assert.Equal(t, deps, reftest.Copy(c.Deps))
			requireFolds(t, c)
		})
	}
}

// TestAliasingInputsDirect checks the inputs TestAliasingInputs cannot hand
// to a context it built: options, run contexts, constructors and Fold.
func TestAliasingInputsDirect(t *testing.T) {
	t.Run("WithMessages", func(t *testing.T) {
		ms := []nous.Message{fullMessage()}
		c := nous.NewContext(nous.WithMessages(ms...))
		reftest.Scribble(&ms[0])
		assert.Equal(t, []nous.Message{fullMessage()}, c.Messages())
	})
	t.Run("WithDeps", func(t *testing.T) {
		deps := map[string]any{"a": map[string]any{"b": []any{1, map[string]any{"c": 2}}}}
		c := nous.NewContext(nous.WithDeps(deps))
		reftest.Scribble(deps)
		assert.Equal(t, map[string]any{"a": map[string]any{"b": []any{1, map[string]any{"c": 2}}}}, c.Deps)
	})
	t.Run("NewRunContext and FromRunContext", func(t *testing.T) {
		deps := map[string]any{"a": map[string]any{"b": []any{1}}}
		rc := nous.NewRunContext(deps)
		c := nous.FromRunContext(rc)
		reftest.Scribble(deps)
		assert.Equal(t, map[string]any{"a": map[string]any{"b": []any{1}}}, rc.Deps)
		reftest.Scribble(rc.Deps)
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
		reftest.Scribble(p.WritableRoots[len(p.WritableRoots):])
		for _, got := range []nous.RunContext{rc, rc2} {
			assert.Equal(t, &nous.SandboxPolicy{Mode: nous.SandboxWorkspaceWrite, WritableRoots: []string{"/work"}}, got.Sandbox)
			reftest.Scribble(got.Sandbox.WritableRoots[len(got.Sandbox.WritableRoots):])
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
		reftest.Scribble(events)
		assert.Equal(t, want, got, "Fold's result does not share with its input")
		reftest.Scribble(got)
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
			reftest.Scribble(ms)
			_ = append(ms, mUser("appended"))
		}},
		{"Messages resliced to zero and appended", func(t *testing.T, c *nous.Context) {
			ms := c.Messages()
			ms = append(ms[:0], mUser("evil"), mUser("evil"))
			reftest.Scribble(&ms[0])
		}},
		{"LastMessage", func(t *testing.T, c *nous.Context) {
			m, _ := c.LastMessage()
			reftest.Scribble(&m)
		}},
		{"AssistantMessages", func(t *testing.T, c *nous.Context) {
			ms := c.AssistantMessages()
			reftest.Scribble(ms)
			_ = append(ms, mUser("appended"))
		}},
		{"Log().Events", func(t *testing.T, c *nous.Context) {
			es := c.Log().Events()
			reftest.Scribble(es)
			_ = append(es, nous.Event{Seq: 99})
		}},
		{"Log().Event", func(t *testing.T, c *nous.Context) {
			for seq := int64(1); seq <= int64(c.Log().Len()); seq++ {
				e, _ := c.Log().Event(seq)
				reftest.Scribble(&e)
			}
		}},
		{"Log().All", func(t *testing.T, c *nous.Context) {
			for e := range c.Log().All() {
				reftest.Scribble(&e)
			}
		}},
		{"All, appending onto yielded slices", func(t *testing.T, c *nous.Context) {
			// All shares maps and slices with the log and documents them as
			// read-only; appending onto them is still harmless.
			for _, m := range c.All() {
				_ = append(m.Parts, nous.TextPart("appended"))
				_ = append(m.ToolCalls, nous.ToolCall{ID: "appended"})
				reftest.Scribble(m.Parts[len(m.Parts):])
				reftest.Scribble(m.ToolCalls[len(m.ToolCalls):])
				for _, tc := range m.ToolCalls {
					reftest.Scribble(tc.Arguments[len(tc.Arguments):])
				}
			}
		}},
		{"Fold", func(t *testing.T, c *nous.Context) {
			ms, _ := nous.Fold(c.Log().Events())
			reftest.Scribble(ms)
		}},
		{"ToRunContext", func(t *testing.T, c *nous.Context) {
			rc := c.ToRunContext()
			reftest.Scribble(rc.Deps)
		}},
		{"Clone", func(t *testing.T, c *nous.Context) {
			d := c.Clone()
			ms := d.Messages()
			reftest.Scribble(ms)
			reftest.Scribble(d.Deps)
			for i := range d.ToolCalls {
				reftest.Scribble(d.ToolCalls[i].Metadata)
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
	reftest.Scribble(&m)
	l, _ := c.LastMessage()
	reftest.Scribble(&l)
	want := sys
	want.Content = "S\n\nO"
	want.Metadata = map[string]any{"k": map[string]any{"v": 1}}
	want.Parts = []nous.ContentPart{nous.TextPart("p")}
	assert.Equal(t, []nous.Message{want}, c.Messages())
	want.Content = "S"
	assert.Equal(t, []nous.Message{want}, mustFold(t, c))
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
		}{{c, "\n\nC"}, {d, "\n\nD"}, {e, "\n\nE"}} {
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
