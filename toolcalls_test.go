package nous_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// recorded returns a context that recorded two calls, saved to s.
func recorded(t *testing.T, s nous.Store) *nous.Context {
	t.Helper()
	c := nous.NewContext()
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Arguments: json.RawMessage(`{"x":1}`), Metadata: map[string]any{"thought_signature": "s"}})
	c.AddToolCall(nous.ToolCall{ID: "b", Name: "g"})
	require.NoError(t, c.Save(context.Background(), s))
	return c
}

// The calls the log records are ToolCalls: each is a tool_call event, and
// ToolCalls, the log's ToolCalls and the events' calls agree.
func TestToolCallsAreTheLogsFold(t *testing.T) {
	c := recorded(t, storetest.NewMemory())
	var fold []nous.ToolCall
	for e := range c.Log().All() {
		if e.Call != nil {
			assert.Equal(t, nous.EventToolCall, e.Type)
			fold = append(fold, *e.Call)
		}
	}
	assert.Equal(t, c.ToolCalls, fold)
	assert.Equal(t, c.ToolCalls, c.Log().ToolCalls())

	// What the log hands out is the caller's.
	got := c.Log().ToolCalls()
	got[0].Metadata["thought_signature"] = "changed"
	e, _ := c.Log().Event(2)
	e.Call.Metadata["thought_signature"] = "changed"
	assert.Equal(t, "s", c.Log().ToolCalls()[0].Metadata["thought_signature"])
	// ToolCalls is a copy apart from the log's: editing it in place does
	// not reach the log.
	c.ToolCalls[0].Metadata["thought_signature"] = "edited"
	assert.Equal(t, "s", c.Log().ToolCalls()[0].Metadata["thought_signature"])

	// A tool_call event logged by hand records no call.
	require.NoError(t, c.LogEvent(nous.EventToolCall, map[string]any{"name": "noted"}))
	assert.Len(t, c.Log().ToolCalls(), 2)
}

// Calls appended to ToolCalls directly are recorded, in order, by the next
// operation that reads the record, and stored as events.
func TestToolCallsAppendedDirectlyAreRecorded(t *testing.T) {
	ctx := context.Background()
	for name, read := range map[string]func(t *testing.T, c *nous.Context, s nous.Store){
		"Save": func(t *testing.T, c *nous.Context, s nous.Store) { require.NoError(t, c.Save(ctx, s)) },
		"Serialize": func(t *testing.T, c *nous.Context, s nous.Store) {
			_, err := c.Serialize()
			require.NoError(t, err)
		},
		"AddToolCall": func(t *testing.T, c *nous.Context, s nous.Store) { c.AddToolCall(nous.ToolCall{ID: "next", Name: "h"}) },
		"Refresh":     func(t *testing.T, c *nous.Context, s nous.Store) { require.NoError(t, c.Refresh(ctx, s)) },
		"Clone":       func(t *testing.T, c *nous.Context, s nous.Store) { c.Clone() },
	} {
		t.Run(name, func(t *testing.T) {
			s := storetest.NewMemory()
			c := recorded(t, s)
			head := c.Log().Len()
			backing := c.ToolCalls[:len(c.ToolCalls):len(c.ToolCalls)]
			c.ToolCalls = append(backing, nous.ToolCall{ID: "c", Name: "h"}, nous.ToolCall{ID: "d", Name: "h"})
			read(t, c, s)
			require.Equal(t, c.ToolCalls, c.Log().ToolCalls())
			ids := []string{}
			for _, tc := range c.ToolCalls {
				ids = append(ids, tc.ID)
			}
			assert.Equal(t, []string{"a", "b", "c", "d"}, ids[:4])
			assert.GreaterOrEqual(t, c.Log().Len(), head+2, "one event per call")
			require.NoError(t, c.Save(ctx, s))
			got, err := nous.Load(ctx, s, c.Log().ID())
			require.NoError(t, err)
			assert.Equal(t, c.ToolCalls, got.ToolCalls)
		})
	}
}

// A list that no longer starts with the recorded calls is refused by Save,
// Refresh and Serialize, which change nothing; one edited in place, only
// by Serialize, which compares every call. Setting the log's record back
// is the way on.
func TestToolCallsEditedAreRefused(t *testing.T) {
	ctx := context.Background()
	edits := []struct {
		name    string
		edit    func(c *nous.Context)
		inPlace bool
	}{
		{"emptied", func(c *nous.Context) { c.ToolCalls = nil }, false},
		{"shortened", func(c *nous.Context) { c.ToolCalls = c.ToolCalls[:1] }, false},
		{"a call removed, one appended", func(c *nous.Context) {
			c.ToolCalls = append(slices.Clone(c.ToolCalls[1:]), nous.ToolCall{ID: "z"})
		}, false},
		{"replaced by a copy with another name", func(c *nous.Context) {
			c.ToolCalls = slices.Clone(c.ToolCalls)
			c.ToolCalls[1].Name = "other"
		}, false},
		{"a copy with other metadata", func(c *nous.Context) {
			c.ToolCalls = slices.Clone(c.ToolCalls)
			c.ToolCalls[0].Metadata = map[string]any{"thought_signature": "t"}
		}, false},
		{"a copy with other arguments", func(c *nous.Context) {
			c.ToolCalls = slices.Clone(c.ToolCalls)
			c.ToolCalls[0].Arguments = json.RawMessage(`{"x":2}`)
		}, false},
		{"arguments edited in place", func(c *nous.Context) { c.ToolCalls[0].Arguments = json.RawMessage(`{"x":2}`) }, true},
		{"metadata edited in place", func(c *nous.Context) { c.ToolCalls[0].Metadata["thought_signature"] = "t" }, true},
		{"a call replaced in place", func(c *nous.Context) { c.ToolCalls[1] = nous.ToolCall{ID: "b2", Name: "g"} }, true},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.NewMemory()
			c := recorded(t, s)
			head := c.Log().Len()
			tt.edit(c)
			_, err := c.Serialize()
			assert.ErrorIs(t, err, nous.ErrToolCallsEdited, "Serialize")
			if !tt.inPlace {
				assert.ErrorIs(t, c.Save(ctx, s), nous.ErrToolCallsEdited, "Save")
				assert.ErrorIs(t, c.Refresh(ctx, s), nous.ErrToolCallsEdited, "Refresh")
			}
			assert.Equal(t, head, c.Log().Len(), "nothing recorded")
			stored, err := nous.Load(ctx, s, c.Log().ID())
			require.NoError(t, err)
			assert.Equal(t, head, stored.Log().Len(), "nothing stored")

			c.ToolCalls = c.Log().ToolCalls()
			_, err = c.Serialize()
			require.NoError(t, err)
			require.NoError(t, c.Save(ctx, s))
			assert.Equal(t, stored.ToolCalls, c.ToolCalls)
		})
	}
}

// Values JSON cannot hold in a call's metadata are no edit: a NaN is
// dropped alike from the field and the log, and an unchanged context saves
// nothing and serializes.
func TestToolCallsUnencodableMetadataIsNoEdit(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f", Metadata: map[string]any{"score": math.NaN(), "k": []any{}}})
	_, err := c.Serialize()
	require.NoError(t, err)
}

// A clone of a context whose list was edited refuses it too, and a clone
// of a sound one records on its own.
func TestToolCallsOfAClone(t *testing.T) {
	ctx := context.Background()
	c := recorded(t, storetest.NewMemory())
	d := c.Clone()
	d.AddToolCall(nous.ToolCall{ID: "only d"})
	assert.Len(t, c.ToolCalls, 2)
	assert.Len(t, d.ToolCalls, 3)
	assert.Equal(t, d.ToolCalls, d.Log().ToolCalls())

	c.ToolCalls = c.ToolCalls[:1]
	e := c.Clone()
	assert.ErrorIs(t, e.Save(ctx, storetest.NewMemory()), nous.ErrToolCallsEdited)
}

// Documents that keep tool calls apart from the log read as if the calls
// were recorded after the log's events: this package's documents from
// before tool_call events held calls, version 1, and the reference
// library's own version 2. A document whose tool_calls contradicts its
// log's record is refused.
func TestToolCallsKeptApartAreRecorded(t *testing.T) {
	for _, name := range []string{"testdata/v2/toolcalls_apart.json", "testdata/v1/basic.json", "testdata/nous017/tool_loop.json"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(name)
			require.NoError(t, err)
			var doc struct {
				ToolCalls []nous.ToolCall `json:"tool_calls"`
			}
			require.NoError(t, json.Unmarshal(data, &doc))
			require.NotEmpty(t, doc.ToolCalls)
			c, err := nous.DeserializeWithLogger(data, quietLogger())
			require.NoError(t, err)
			assert.Equal(t, doc.ToolCalls, c.ToolCalls)
			n := c.Log().Len()
			for i := range doc.ToolCalls {
				e, _ := c.Log().Event(int64(n - len(doc.ToolCalls) + 1 + i))
				require.NotNil(t, e.Call, "the last events record the calls")
				assert.Equal(t, doc.ToolCalls[i], *e.Call)
			}
			// Written again, the calls are in the log, and the projection
			// agrees: reading it again records nothing more.
			again, err := c.Serialize()
			require.NoError(t, err)
			d, err := nous.Deserialize(again)
			require.NoError(t, err)
			assert.Equal(t, n, d.Log().Len())
			assert.Equal(t, c.ToolCalls, d.ToolCalls)
		})
	}

	c := nous.NewContext()
	c.AddToolCall(nous.ToolCall{ID: "a", Name: "f"})
	c.AddToolCall(nous.ToolCall{ID: "b", Name: "f"})
	data, err := c.Serialize()
	require.NoError(t, err)
	for name, projection := range map[string]string{
		"shorter":   `[{"id":"a","name":"f"}]`,
		"another":   `[{"id":"a","name":"f"},{"id":"x","name":"f"}]`,
		"reordered": `[{"id":"b","name":"f"},{"id":"a","name":"f"}]`,
	} {
		bad := bytes.Replace(data, []byte(`"tool_calls":[{"id":"a","name":"f"},{"id":"b","name":"f"}]`), []byte(`"tool_calls":`+projection), 1)
		require.NotEqual(t, data, bad)
		_, err := nous.Deserialize(bad)
		assert.ErrorIs(t, err, nous.ErrInvalidLog, name)
	}
	for name, projection := range map[string]string{"absent": `null`, "empty": `[]`} {
		ok := bytes.Replace(data, []byte(`"tool_calls":[{"id":"a","name":"f"},{"id":"b","name":"f"}]`), []byte(`"tool_calls":`+projection), 1)
		d, err := nous.Deserialize(ok)
		require.NoError(t, err, name)
		assert.Equal(t, c.ToolCalls, d.ToolCalls, name)
	}
	longer := bytes.Replace(data, []byte(`{"id":"b","name":"f"}]`), []byte(`{"id":"b","name":"f"},{"id":"c","name":"f"}]`), 1)
	d, err := nous.Deserialize(longer)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, []string{d.ToolCalls[0].ID, d.ToolCalls[1].ID, d.ToolCalls[2].ID})
	assert.Equal(t, c.Log().Len()+1, d.Log().Len(), "the call the log lacked is recorded")
}

// An event that records a call must be a tool_call event.
func TestToolCallOnlyOnToolCallEvents(t *testing.T) {
	call := &nous.ToolCall{ID: "a", Name: "f"}
	for _, e := range []nous.Event{
		{Seq: 1, Type: nous.EventTurnStart, Call: call},
		{Seq: 1, Type: nous.EventUserMessage, Message: &nous.Message{Role: nous.RoleUser, Content: "x"}, Call: call},
	} {
		_, err := nous.Fold([]nous.Event{e})
		assert.ErrorIs(t, err, nous.ErrInvalidLog, "%s", e.Type)
	}
	_, err := nous.Fold([]nous.Event{{Seq: 1, Type: nous.EventToolCall, Call: call}})
	require.NoError(t, err)
}

// A legacy store state, which kept calls apart, loads with them recorded;
// the next save stores them as events and drops them from the state.
func TestLoadRecordsCallsKeptApart(t *testing.T) {
	ctx := context.Background()
	mem := storetest.NewMemory()
	c := nous.NewContext()
	require.NoError(t, c.AddMessage(nous.UserMessage("hi")))
	require.NoError(t, c.Save(ctx, mem))
	legacy := &lying{Store: mem, edit: func(st *nous.Stored) {
		st.State = append(bytes.TrimSuffix(st.State, []byte("}")), `,"tool_calls":[{"id":"old","name":"f","arguments":{"a":1}}]}`...)
	}}
	got, err := nous.Load(ctx, legacy, c.Log().ID())
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, "old", got.ToolCalls[0].ID)
	assert.Equal(t, c.Log().Len()+1, got.Log().Len())
	require.NoError(t, got.Save(ctx, mem))
	again, err := nous.Load(ctx, mem, c.Log().ID())
	require.NoError(t, err)
	assert.Equal(t, got.ToolCalls, again.ToolCalls)
	assert.Equal(t, got.Log().Len(), again.Log().Len())
	st, err := mem.Read(ctx, c.Log().ID(), 0)
	require.NoError(t, err)
	assert.NotContains(t, string(st.State), `"tool_calls":[`, "the state no longer keeps them")

	// Refresh does not take a state that keeps calls apart: Load does.
	b, err := nous.Load(ctx, mem, c.Log().ID())
	require.NoError(t, err)
	require.NoError(t, again.AddMessage(nous.UserMessage("more")))
	require.NoError(t, again.Save(ctx, mem))
	before := serialized(t, b)
	err = b.Refresh(ctx, legacy)
	assert.True(t, errors.Is(err, nous.ErrCorrupt), "Refresh of a state with calls apart: %v", err)
	assert.Equal(t, before, serialized(t, b))
}
