package nous_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// refDoc returns a document of the reference library's version 2 with the
// given events, each `{"seq": i, "type": ..., "time": ..., "data": ...}`.
func refDoc(events ...string) string {
	for i, e := range events {
		events[i] = fmt.Sprintf(`{"seq":%d,"time":"2026-03-01T12:00:%02d.123456Z",%s}`, i, i, e)
	}
	return `{"version":2,"events":[` + strings.Join(events, ",") + `],"messages":[],"tool_calls":[],"system_prompt":"s",
		"deps":{"k":1},"usage":{"requests":1,"tool_calls":0,"input_tokens":5,"output_tokens":2,"total_tokens":7,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},
		"needs_response":false,"iteration":1,"max_iterations":10,"started_at":"2026-03-01T12:00:00.000000Z","agent_name":"a"}`
}

func refMsg(typ, content string, extra ...string) string {
	data := append([]string{fmt.Sprintf(`"content":%q,"name":null,"metadata":{}`, content)}, extra...)
	return fmt.Sprintf(`"type":%q,"data":{%s}`, typ, strings.Join(data, ","))
}

func viewContents(c *nous.Context) []string {
	var out []string
	for _, m := range c.All() {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return out
}

// Replacements name positions: an appended event's is its seq, a
// replacement's the start of what it replaced; a later one shadows every
// earlier entry whose position is in its range, earlier summaries included.
func TestDeserializeReferenceVersion2(t *testing.T) {
	data := refDoc(
		refMsg("system_message", "rules"),                // 0, position 0
		refMsg("user_message", "q1"),                     // 1
		`"type":"step_start","data":{"turn":1,"step":1}`, // 2: bookkeeping
		refMsg("assistant_message", "a1", `"tool_calls":[{"id":"c1","name":"f","arguments":{"x":1}}]`, `"reasoning_content":null`), // 3
		refMsg("tool_result", "r1", `"tool_call_id":"c1"`),                                                                         // 4
		refMsg("user_message", "q2", `"source":"memory"`, `"extra":[1,2]`),                                                         // 5
		refMsg("system_message", "summary 1", `"surface_op":["replace",1,4]`),                                                      // 6: position 1, shadows 1, 3, 4
		refMsg("assistant_message", "a2", `"reasoning_content":"hm"`),                                                              // 7
		refMsg("system_message", "summary 2", `"surface_op":["replace",1,5]`),                                                      // 8: shadows summary 1 (position 1) and 5
	)
	c, err := nous.Deserialize([]byte(data))
	require.NoError(t, err)
	assert.Equal(t, []string{"system:rules", "system:summary 2", "assistant:a2"}, viewContents(c))
	assert.Equal(t, 9, c.Log().Len(), "every event, shadowed ones too")

	events := c.Log().Events()
	assert.Equal(t, nous.EventStepStart, events[2].Type)
	assert.Equal(t, map[string]any{"turn": 1, "step": 1}, events[2].Data)
	assert.Equal(t, map[string]any{"source": "memory", "extra": []any{1, 2}}, events[5].Data, "source and unknown keys kept")
	assert.Equal(t, nous.EventReplace, events[6].Type)
	assert.Equal(t, []int64{2, 5}, []int64{events[6].First, events[6].Last}, "anchors are our seqs: reference seq + 1")
	assert.Equal(t, []int64{7, 6}, []int64{events[8].First, events[8].Last})
	assert.Equal(t, "hm", events[7].Message.ReasoningContent)
	assert.Equal(t, `{"x":1}`, string(events[3].Message.ToolCalls[0].Arguments))
	assert.Equal(t, "2026-03-01T12:00:03.123456Z", events[3].CreatedAt.Format("2006-01-02T15:04:05.000000Z"))
	assert.Equal(t, events[3].CreatedAt, events[3].Message.CreatedAt)
	assert.Equal(t, "s", c.SystemPrompt)
	assert.Equal(t, map[string]any{"k": 1}, c.Deps)
	assert.Equal(t, 7, c.Usage.TotalTokens)

	// What is read saves and loads as our version 2.
	again, err := c.Serialize()
	require.NoError(t, err)
	d, err := nous.Deserialize(again)
	require.NoError(t, err)
	assert.Equal(t, c.Messages(), d.Messages())
	assert.Equal(t, c.Log().Events(), d.Log().Events())
}

func TestDeserializeReferenceVersion2Errors(t *testing.T) {
	_, err := nous.Deserialize([]byte(`{"version":2,"events":[{"seq":0,"type":"turn_start","data":{}}]}`))
	require.ErrorIs(t, err, nous.ErrMalformed)
	assert.Contains(t, err.Error(), "events[0].time: missing")

	for _, tt := range []struct {
		name   string
		events []string
		target error
		place  string
	}{
		{"seq not its index", []string{`"seq":3,` + refMsg("user_message", "x")}, nous.ErrInvalidLog, "events[0]: seq 3, want 0"},
		{"our replace type", []string{refMsg("replace", "x")}, nous.ErrUnknownEventType, "events[0]"},
		{"unknown type", []string{refMsg("wizard", "x")}, nous.ErrUnknownEventType, "events[0]"},
		{"replace shadowing nothing", []string{refMsg("user_message", "x"), refMsg("system_message", "s", `"surface_op":["replace",5,9]`)}, nous.ErrInvalidLog, "events[1]: replace of positions 5..9"},
		{"surface_op not a replace", []string{refMsg("user_message", "x"), refMsg("system_message", "s", `"surface_op":["insert",0,0]`)}, nous.ErrMalformed, "events[1].data.surface_op"},
		{"surface_op backwards", []string{refMsg("user_message", "x"), refMsg("system_message", "s", `"surface_op":["replace",1,0]`)}, nous.ErrMalformed, "events[1].data.surface_op"},
		{"huge stop", []string{refMsg("user_message", "x"), refMsg("system_message", "s", `"surface_op":["replace",0,9223372036854775807]`)}, nil, ""},
		{"invalid message", []string{refMsg("user_message", "")}, nous.ErrInvalidMessage, "events[0]"},
		{"data not an object", []string{`"type":"turn_start","data":[1]`}, nous.ErrMalformed, "events[0].data"},
		{"surface_op append", []string{refMsg("user_message", "x", `"surface_op":"append"`)}, nil, ""},
		{"a bad time names its event", []string{refMsg("user_message", "x"), `"time":"yesterday",` + refMsg("user_message", "y")}, nous.ErrMalformed, "events[1]"},
		{"a bad seq type names its event", []string{refMsg("user_message", "x"), `"seq":"one",` + refMsg("user_message", "y")}, nous.ErrMalformed, "events[1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events := tt.events
			doc := refDoc(events...)
			// refDoc puts the seq first; a case that sets its own seq wins
			// because encoding/json takes the last duplicate key.
			_, err := nous.Deserialize([]byte(doc))
			if tt.target == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), tt.place)
		})
	}
}

// The fixtures of testdata/nous017 are documents as Nous v0.17.1 writes them,
// built by hand from its source, each with the view its own fold gives,
// derived by hand from its rules.
func TestDeserializeReferenceFixtures(t *testing.T) {
	type viewEntry struct {
		Role       nous.Role       `json:"role"`
		Content    string          `json:"content,omitempty"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
		Name       string          `json:"name,omitempty"`
		ToolCalls  []nous.ToolCall `json:"tool_calls,omitempty"`
		CreatedAt  time.Time       `json:"created_at"`
	}
	for _, name := range []string{"chat", "tool_loop", "compacted_twice"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "nous017", name+".json"))
			require.NoError(t, err)
			wantJSON, err := os.ReadFile(filepath.Join("testdata", "nous017", name+".view.json"))
			require.NoError(t, err)
			var want []viewEntry
			require.NoError(t, json.Unmarshal(wantJSON, &want))
			compact := func(calls []nous.ToolCall) []nous.ToolCall {
				for i := range calls { // kept as the files have them, indented: compare what they say
					var b bytes.Buffer
					require.NoError(t, json.Compact(&b, calls[i].Arguments))
					calls[i].Arguments = b.Bytes()
				}
				return calls
			}
			for i := range want {
				want[i].ToolCalls = compact(want[i].ToolCalls)
			}

			c, err := nous.Deserialize(data)
			require.NoError(t, err)
			var got []viewEntry
			for _, m := range c.All() {
				got = append(got, viewEntry{m.Role, m.Text(), m.ToolCallID, m.Name, compact(m.ToolCalls), m.CreatedAt})
			}
			require.Equal(t, len(want), len(got), "view length")
			for i := range want {
				assert.JSONEq(t, string(must(json.Marshal(want[i]))), string(must(json.Marshal(got[i]))), "view[%d]", i)
			}
			var doc struct{ Events []json.RawMessage }
			require.NoError(t, json.Unmarshal(data, &doc))
			var calls struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			}
			require.NoError(t, json.Unmarshal(data, &calls))
			assert.Equal(t, len(doc.Events)+len(calls.ToolCalls), c.Log().Len(), "every event is kept, and each recorded call is one more")
			for i, tc := range c.ToolCalls {
				e, _ := c.Log().Event(int64(len(doc.Events) + 1 + i))
				assert.Equal(t, tc, *e.Call, "the event of recorded call %d", i)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
