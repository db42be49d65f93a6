package nous_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
	"github.com/nous-go/nous/storetest"
)

// oddValues are values JSON cannot hold, or holds only in part.
func oddValues() map[string]func() any {
	return map[string]func() any{
		"NaN":               func() any { return math.NaN() },
		"+Inf":              func() any { return math.Inf(1) },
		"-Inf":              func() any { return math.Inf(-1) },
		"float32 NaN":       func() any { return float32(math.NaN()) },
		"a func":            func() any { return func() {} },
		"a chan":            func() any { return make(chan int) },
		"complex":           func() any { return complex(1, 2) },
		"a bad json.Number": func() any { return json.Number("1e") },
		"a cycle": func() any {
			m := map[string]any{"x": 1}
			m["self"] = m
			return m
		},
		"deep nesting": func() any {
			var v any = "bottom"
			for range 2000 {
				v = []any{v}
			}
			return v
		},
		"keys alike but for bad UTF-8": func() any { return map[string]any{"k\xff": 1, "k\xfe": 2} },
		"a struct with a func":         func() any { return struct{ F func() }{} },
		"a list of them":               func() any { return []any{math.NaN(), func() {}} },
	}
}

// places are where a runtime can put a value: each adds v to c through the
// library's own API and returns that call's error.
var places = map[string]func(c *nous.Context, v any) error{
	"deps": func(c *nous.Context, v any) error {
		c.MergeDeps(map[string]any{"odd": v, "nested": map[string]any{"list": []any{v}}})
		return nil
	},
	"an update": func(c *nous.Context, v any) error {
		return nous.NewContextUpdate().Set("odd", v).Append("list", v).Apply(c)
	},
	"event data": func(c *nous.Context, v any) error { return c.LogEvent(nous.EventTurnStart, map[string]any{"odd": v}) },
	"message metadata": func(c *nous.Context, v any) error {
		m := nous.UserMessage("text")
		m.Metadata = map[string]any{"odd": v}
		return c.AddMessage(m)
	},
	"the options of a message's only part": func(c *nous.Context, v any) error {
		return c.AddMessage(nous.Message{Role: nous.RoleUser, Parts: []nous.ContentPart{{Type: nous.PartImage, Options: map[string]any{"detail": v}}}})
	},
	"the options of a system message's only part": func(c *nous.Context, v any) error {
		return c.AddMessage(nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{{Type: nous.PartText, Options: map[string]any{"odd": v}}}})
	},
	"part options beside text": func(c *nous.Context, v any) error {
		return c.AddMessage(nous.Message{Role: nous.RoleUser, Parts: []nous.ContentPart{nous.TextPart("hi"), {Type: nous.PartImage, Options: map[string]any{"odd": v}}}})
	},
	"a call's metadata": func(c *nous.Context, v any) error {
		return c.AddMessages(nous.AssistantMessage("", nous.ToolCall{ID: "a", Name: "f", Metadata: map[string]any{"odd": v}}), nous.ToolMessage("a", "f", "ok"))
	},
	"a recorded call's metadata": func(c *nous.Context, v any) error {
		c.AddToolCall(nous.ToolCall{ID: "r", Name: "f", Metadata: map[string]any{"odd": v}})
		return nil
	},
	"a summary's metadata": func(c *nous.Context, v any) error {
		m := nous.SystemMessage("summary")
		m.Metadata = map[string]any{"odd": v}
		return c.ReplaceMessage(0, m)
	},
}

// Whatever value a runtime puts wherever the API lets it, the session
// stays loadable: the API refuses it, or Serialize and every store write
// what reads back, the same context through Deserialize and through Load.
// An unencodable time, too.
func TestOddValuesNeverMakeASessionUnloadable(t *testing.T) {
	ctx := context.Background()
	fs, err := filestore.Open(t.TempDir(), filestore.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	stores := map[string]nous.Store{"memory": storetest.NewMemory(), "file": fs}
	// check builds the context twice, once per store: a context knows its
	// log as one store holds it.
	check := func(t *testing.T, build func(t *testing.T) *nous.Context) {
		t.Helper()
		for name, s := range stores {
			c := build(t)
			// Serialized after the save, which records the deps in the
			// log: a loaded context is what Serialize gives then.
			if err := c.Save(ctx, s); err != nil {
				t.Fatalf("Save to the %s store: %v", name, err)
			}
			data, err := c.Serialize()
			if err != nil {
				t.Fatalf("Serialize: %v", err)
			}
			d, err := nous.DeserializeWithLogger(data, quietLogger())
			if err != nil {
				t.Fatalf("what Serialize wrote does not read back: %v", err)
			}
			want, _ := d.Serialize()
			got, err := nous.Load(ctx, s, c.Log().ID())
			if err != nil {
				t.Fatalf("what the %s store holds does not load: %v", name, err)
			}
			if have, _ := got.Serialize(); string(have) != string(want) {
				t.Fatalf("the %s store loads another context than Deserialize reads", name)
			}
		}
	}
	for vname, value := range oddValues() {
		for pname, put := range places {
			t.Run(vname+" in "+pname, func(t *testing.T) {
				check(t, func(t *testing.T) *nous.Context {
					c := nous.NewContext(nous.WithLogger(quietLogger()))
					if err := c.AddMessage(nous.UserMessage("first")); err != nil {
						t.Fatal(err)
					}
					if err := put(c, value()); err != nil && !errors.Is(err, nous.ErrInvalidMessage) && !errors.Is(err, nous.ErrTypeMismatch) {
						t.Fatalf("refused with %v, want a refusal that names the message or the value", err)
					}
					return c
				})
			})
		}
	}
	t.Run("times JSON cannot hold", func(t *testing.T) {
		check(t, func(t *testing.T) *nous.Context {
			c := nous.NewContext(nous.WithLogger(quietLogger()))
			c.StartedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			m := nous.UserMessage("from the far future")
			m.CreatedAt = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := c.AddMessage(m); err != nil {
				t.Fatal(err)
			}
			return c
		})
	})
}

// A value that holds itself many times over (each level would double a
// copy that followed it) is taken by MergeDeps, an update and a log
// event at the cost of its size, and a save drops the cycle, keeping the
// rest.
func TestValueHoldingItselfManyTimes(t *testing.T) {
	loop := map[string]any{"name": "loop"}
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		loop[k] = loop
	}
	c := nous.NewContext()
	c.MergeDeps(map[string]any{"loop": loop, "plain": 1})
	if err := nous.NewContextUpdate().Set("again", loop).Apply(c); err != nil {
		t.Fatal(err)
	}
	if err := c.LogEvent(nous.EventRequestHeader, map[string]any{"loop": loop}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	back, err := nous.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Deps["plain"] != 1 {
		t.Errorf("deps after a round trip: %v", back.Deps)
	}
}
