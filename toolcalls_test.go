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
	"time"

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
		{"a copy with arguments for a call without metadata", func(c *nous.Context) {
			c.ToolCalls = slices.Clone(c.ToolCalls)
			c.ToolCalls[1].Arguments = json.RawMessage(`{"y":1}`)
		}, false},
		{"a copy with empty metadata for none", func(c *nous.Context) { // written "metadata":{}
			c.ToolCalls = slices.Clone(c.ToolCalls)
			c.ToolCalls[1].Metadata = map[string]any{}
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
// of a sound one records on its own: the calls each side records after
// the clone are its own, in its field and in its log.
func TestToolCallsOfAClone(t *testing.T) {
	ctx := context.Background()
	c := recorded(t, storetest.NewMemory())
	d := c.Clone()
	d.AddToolCall(nous.ToolCall{ID: "only d"})
	c.AddToolCall(nous.ToolCall{ID: "only c"})
	for _, x := range []*nous.Context{c, d} {
		assert.Len(t, x.ToolCalls, 3)
		assert.Equal(t, x.ToolCalls, x.Log().ToolCalls())
	}
	assert.Equal(t, "only c", c.ToolCalls[2].ID)
	assert.Equal(t, "only d", d.ToolCalls[2].ID)

	c.ToolCalls = c.ToolCalls[:1]
	e := c.Clone()
	assert.ErrorIs(t, e.Save(ctx, storetest.NewMemory()), nous.ErrToolCallsEdited)
}

// Calls appended to ToolCalls directly are recorded as copies: the slice
// the caller assigned, its array and its room to grow stay the caller's,
// and writing them later changes neither ToolCalls nor the log.
func TestToolCallsAppendedDirectlyStayTheCallers(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := recorded(t, s)
	mine := append(make([]nous.ToolCall, 0, 8), c.ToolCalls...)
	mine = append(mine, nous.ToolCall{ID: "c", Name: "h", Arguments: json.RawMessage(`{"z":1}`)})
	c.ToolCalls = mine
	require.NoError(t, c.Save(ctx, s))
	c.AddToolCall(nous.ToolCall{ID: "d", Name: "h"})

	mine[2].Name = "scribbled"
	mine[2].Arguments[1] = 'X'
	mine = append(mine, nous.ToolCall{ID: "the caller's"}) // into the room past the calls c recorded
	assert.Equal(t, []string{"c", "h", "d"}, []string{c.ToolCalls[2].ID, c.ToolCalls[2].Name, c.ToolCalls[3].ID})
	assert.Len(t, mine, 4)
	assert.Equal(t, c.Log().ToolCalls(), c.ToolCalls)
	_, err := c.Serialize()
	require.NoError(t, err, "the caller's writes are no edit of ToolCalls")
}

// Every operation that records or takes tool calls leaves ToolCalls as the
// record the next Save compares it with, to the slice header: that check
// costs nothing per call, and a Serialize of the unchanged context writes
// nothing, so that two may run at once.
func TestToolCallsRecordIsTheFieldAfterEachOperation(t *testing.T) {
	ctx := context.Background()
	for name, op := range map[string]func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context{
		"AddToolCall": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			c.AddToolCall(nous.ToolCall{ID: "c", Name: "h"})
			return c
		},
		"Save of calls appended directly": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			c.ToolCalls = append(c.ToolCalls, nous.ToolCall{ID: "c", Name: "h"})
			require.NoError(t, c.Save(ctx, s))
			return c
		},
		"Save of the same calls in another slice": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			c.ToolCalls = slices.Clone(c.ToolCalls)
			require.NoError(t, c.Save(ctx, s))
			return c
		},
		"Serialize of the same calls in another slice": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			c.ToolCalls = slices.Clone(c.ToolCalls)
			_, err := c.Serialize()
			require.NoError(t, err)
			return c
		},
		"Load": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			got, err := nous.Load(ctx, s, c.Log().ID())
			require.NoError(t, err)
			return got
		},
		"Deserialize": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			got, err := nous.Deserialize(serialized(t, c))
			require.NoError(t, err)
			return got
		},
		"Refresh of another writer's calls": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context {
			other, err := nous.Load(ctx, s, c.Log().ID())
			require.NoError(t, err)
			other.AddToolCall(nous.ToolCall{ID: "c", Name: "h"})
			require.NoError(t, other.Save(ctx, s))
			require.NoError(t, c.Refresh(ctx, s))
			return c
		},
		"Clone": func(t *testing.T, c *nous.Context, s nous.Store) *nous.Context { return c.Clone() },
	} {
		t.Run(name, func(t *testing.T) {
			s := storetest.NewMemory()
			got := op(t, recorded(t, s), s)
			nous.CheckToolCallsRecordForTest(t, got)
		})
	}
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
			before := time.Now()
			c, err := nous.DeserializeWithLogger(data, quietLogger())
			after := time.Now()
			require.NoError(t, err)
			assert.Equal(t, doc.ToolCalls, c.ToolCalls)
			n := c.Log().Len()
			for i := range doc.ToolCalls {
				e, _ := c.Log().Event(int64(n - len(doc.ToolCalls) + 1 + i))
				require.NotNil(t, e.Call, "the last events record the calls")
				assert.Equal(t, doc.ToolCalls[i], *e.Call)
				assert.WithinRange(t, e.CreatedAt, before, after, "the events are stamped with the time of the restore")
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
	start := time.Now()
	got, err := nous.Load(ctx, legacy, c.Log().ID())
	end := time.Now()
	require.NoError(t, err)
	require.Len(t, got.ToolCalls, 1)
	assert.Equal(t, "old", got.ToolCalls[0].ID)
	assert.Equal(t, c.Log().Len()+1, got.Log().Len())
	e, _ := got.Log().Event(int64(got.Log().Len()))
	assert.WithinRange(t, e.CreatedAt, start, end, "the call's event is stamped with the time of the load")
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
