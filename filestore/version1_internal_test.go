package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// A file of version 1, which kept tool calls apart from the events, loads
// with them recorded as events; the next save rewrites it in the current
// version, one frame that keeps none, and the file then loads as saved,
// also after a reopen.
func TestVersion1FileLoadsAndSavesOn(t *testing.T) {
	ctx := context.Background()
	c := nous.NewContext()
	for _, text := range []string{"one", "two", "three"} {
		if err := c.AddMessage(nous.UserMessage(text)); err != nil {
			t.Fatal(err)
		}
	}
	events := make([]json.RawMessage, 3)
	for i := range events {
		b, err := c.AppendEventJSON(nil, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		events[i] = b
	}
	id, at := c.Log().ID(), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	info := nous.LogInfo{ID: id, Incarnation: uuid.New(), CreatedAt: at, UpdatedAt: at}
	call := func(id string) json.RawMessage {
		return json.RawMessage(`{"id":"` + id + `","name":"f","arguments":{"n":1}}`)
	}
	state := []byte(`{"version":2,"system_prompt":"old","max_iterations":10}`)
	first, second := info, info
	first.Head, second.Head = 2, 3
	b := []byte(magicV1)
	b = appendFrame(b, &frame{info: first, revision: 1, state: state, events: events[:2], calls: []json.RawMessage{call("a"), call("b")}}, 1)
	b = appendFrame(b, &frame{info: second, after: 2, revision: 2, state: state, events: events[2:], callsAt: 1, calls: []json.RawMessage{call("c")}}, 1)

	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path(id), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := nous.Load(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	checkCache(t, s, "a version 1 file loaded, its calls kept apart in memory")
	if len(got.ToolCalls) != 2 || got.ToolCalls[0].ID != "a" || got.ToolCalls[1].ID != "c" || got.Log().Len() != 5 || got.SystemPrompt != "old" {
		t.Fatalf("loaded %d events, calls %v, prompt %q: want the calls a and c recorded after 3 events", got.Log().Len(), got.ToolCalls, got.SystemPrompt)
	}
	if err := got.AddMessage(nous.UserMessage("four")); err != nil {
		t.Fatal(err)
	}
	if err := got.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	want, _ := got.Serialize()
	for round := range 2 {
		again, err := nous.Load(ctx, s, id)
		if err != nil {
			t.Fatal(err)
		}
		if have, _ := again.Serialize(); string(have) != string(want) {
			t.Fatalf("round %d: a version 1 file saved on loads otherwise:\n%s\n%s", round, have, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s, err = Open(dir); err != nil {
			t.Fatal(err)
		}
	}
	defer s.Close()
	raw, err := os.ReadFile(s.path(id))
	if err != nil {
		t.Fatal(err)
	}
	lf, err := parseLog(raw)
	if err != nil || lf.version != version || len(lf.calls) != 0 || len(lf.frames) != 1 || lf.info.Head != int64(got.Log().Len()) {
		t.Fatalf("the file after a save: version %d, %d calls kept apart, %d frames, head %d, %v; want version %d, none, 1, %d",
			lf.version, len(lf.calls), len(lf.frames), lf.info.Head, err, version, got.Log().Len())
	}
}

// A file of version 1 gives the calls it keeps apart in its state's
// tool_calls, whatever white space the state has; a state that is not an
// object is given as it is, for Load to refuse, and never a panic.
func TestVersion1StateWithCalls(t *testing.T) {
	calls := []json.RawMessage{json.RawMessage(`{"id":"a"}`), json.RawMessage(`{"id":"b"}`)}
	const list = `"tool_calls":[{"id":"a"},{"id":"b"}]`
	tests := []struct {
		name, state string
		calls       []json.RawMessage
		want        string
	}{
		{"fields", `{"version":2}`, calls, `{"version":2,` + list + `}`},
		{"no fields", `{}`, calls, `{` + list + `}`},
		{"blank inside", `{ }`, calls, `{ ` + list + `}`},
		{"white space after", "{\"version\":2} \n", calls, `{"version":2,` + list + `}`},
		{"no calls", `{"version":2}`, nil, `{"version":2}`},
		{"not an object", `[1]`, calls, `[1]`},
		{"a lone brace", `}`, calls, `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lf := logFile{version: 1, state: []byte(tt.state), calls: tt.calls}
			if got := string(lf.stateWithCalls()); got != tt.want {
				t.Fatalf("state %q with %d calls: got %s, want %s", tt.state, len(tt.calls), got, tt.want)
			}
		})
	}
}

// A frame of a file of version 1 that replaces the calls kept apart from
// an index past those kept is damage: an error wrapping nous.ErrCorrupt,
// not a panic.
func TestVersion1CallsFromPastThoseKept(t *testing.T) {
	info := nous.LogInfo{ID: uuid.New(), Incarnation: uuid.New()}
	call := json.RawMessage(`{"id":"a","name":"f"}`)
	for _, tt := range []struct {
		name   string
		frames []frame
	}{
		{"in the first frame", []frame{{info: info, revision: 1, state: []byte(`{}`), callsAt: 1, calls: []json.RawMessage{call}}}},
		{"in a later frame", []frame{
			{info: info, revision: 1, state: []byte(`{}`), calls: []json.RawMessage{call}},
			{info: nous.LogInfo{ID: info.ID, Incarnation: info.Incarnation}, revision: 2, state: []byte(`{}`), callsAt: 3, calls: []json.RawMessage{call}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(magicV1)
			for i := range tt.frames {
				b = appendFrame(b, &tt.frames[i], 1)
			}
			if _, err := parseLog(b); !errors.Is(err, nous.ErrCorrupt) {
				t.Fatalf("parse: %v, want ErrCorrupt", err)
			}
		})
	}
}
