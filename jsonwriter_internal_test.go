package nous

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// stdJSON returns what encoding/json writes for v with SetEscapeHTML(false):
// what jsonWriter must write byte for byte.
func stdJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func writerJSON(t testing.TB, write func(w *jsonWriter)) string {
	t.Helper()
	var buf bytes.Buffer
	w := newJSONWriter(&buf)
	write(w)
	if w.err != nil {
		t.Fatalf("jsonWriter: %v", w.err)
	}
	return buf.String()
}

// checkSameJSON fails unless jsonWriter writes e, and its message, exactly
// as encoding/json does. With encoding/json version 2, which writes invalid
// UTF-8 differently, it checks that the two decode to the same values.
func checkSameJSON(t testing.TB, e Event) {
	t.Helper()
	same := func(what, got, want string) {
		t.Helper()
		if got == want {
			return
		}
		if encodingJSONv2 {
			var g, w any
			if json.Unmarshal([]byte(got), &g) == nil && json.Unmarshal([]byte(want), &w) == nil && reflect.DeepEqual(g, w) {
				return
			}
		}
		t.Errorf("%s:\njsonWriter    %s\nencoding/json %s", what, got, want)
	}
	same("event", writerJSON(t, func(w *jsonWriter) { w.event(&e) }), stdJSON(t, &e))
	if e.Message != nil {
		same("message", writerJSON(t, func(w *jsonWriter) { w.message(e.Message) }), stdJSON(t, e.Message))
	}
}

func TestJSONWriterMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 89, time.UTC)
	paris := time.FixedZone("CET", 3600)
	lmt := time.FixedZone("LMT", 561) // an offset with seconds, which RFC 3339 drops
	tricky := "a\"b\\c\x00\x01\x1f\x7f\b\f\n\r\t<>&\u2028\u2029é\xff\xc3(\xed\xa0\x80😀 end"
	for _, tc := range []struct {
		name string
		e    Event
	}{
		{"bookkeeping", Event{Seq: 3, Type: EventTurnStart, CreatedAt: at}},
		{"bookkeeping with data", Event{Seq: 4, Type: EventToolCall, CreatedAt: at.In(paris),
			Data: map[string]any{"b": 1, "a": []any{"x", 2.5, nil, true}, "<html>": "&"}}},
		{"empty data", Event{Seq: 1, Type: EventRequestHeader, Data: map[string]any{}, CreatedAt: at}},
		{"plain message", Event{Seq: 1, Type: EventUserMessage, CreatedAt: at,
			Message: &Message{Role: RoleUser, Content: "hello", CreatedAt: at}}},
		{"message without time", Event{Seq: 1, Type: EventUserMessage, CreatedAt: time.Time{},
			Message: &Message{Role: RoleUser, Content: "hello"}}},
		{"tricky strings", Event{Seq: 9, Type: EventType(tricky), CreatedAt: at.In(lmt),
			Message: &Message{Role: Role(tricky), Content: tricky, ReasoningContent: tricky,
				ToolCallID: tricky, Name: tricky, CreatedAt: at.In(lmt)}}},
		{"every field", Event{Seq: 12, Type: EventReplace, First: 2, Last: 7, CreatedAt: at,
			Data: map[string]any{"source": "compaction"},
			Message: &Message{
				Role: RoleAssistant, Content: "c", ReasoningContent: "thinking",
				Parts: []ContentPart{
					TextPart("t"),
					{Type: PartImage, Content: "https://example.com/a.png", Options: map[string]any{"media_type": "image/png"}},
					{Type: PartThinking, Options: map[string]any{}},
				},
				ToolCalls: []ToolCall{
					{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(" {\n \"city\" : \"Paris\", \"n\": [1, 2.50, -3e2] }\t")},
					{ID: "call_2", Name: "noop"},
					{ID: "call_3", Name: "meta", Arguments: json.RawMessage(`{}`), Metadata: map[string]any{"thought_signature": "c2ln"}},
					{ID: "", Name: "", Metadata: map[string]any{}},
				},
				ToolCallID: "x", Name: "n",
				Metadata:  map[string]any{"z": map[string]any{"y": []any{}}, "k": 1.5e300},
				CreatedAt: at,
			}}},
		{"empty, not nil, slices", Event{Seq: 2, Type: EventAssistantMessage, CreatedAt: at,
			Message: &Message{Role: RoleAssistant, Content: "x", Parts: []ContentPart{}, ToolCalls: []ToolCall{}, Metadata: map[string]any{}}}},
		{"negative and large numbers", Event{Seq: -1 << 62, Type: EventReplace, First: -5, Last: 1<<63 - 1, CreatedAt: at}},
		{"far years", Event{Seq: 1, Type: EventTurnEnd, CreatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
		{"year zero", Event{Seq: 1, Type: EventTurnEnd, CreatedAt: time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC)}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkSameJSON(t, tc.e) })
	}
}

// FuzzJSONWriter checks the hand-written encoder against encoding/json on
// arbitrary strings, arguments and times.
func FuzzJSONWriter(f *testing.F) {
	f.Add("hello", "call_1", []byte(`{"city":"Paris"}`), int64(1700000000), int32(0), 0)
	f.Add("a\"b\\\x00\u2028\xff<&>", "", []byte(" [1, {\"a\" : null}] "), int64(-62135596800), int32(999999999), 3600)
	f.Fuzz(func(t *testing.T, s, id string, args []byte, sec int64, nsec int32, offset int) {
		at := time.Unix(sec, int64(nsec)).In(time.FixedZone("", offset%86400))
		if !encodableTime(at) {
			at = time.Unix(sec%1e10, 0).UTC()
		}
		tc := ToolCall{ID: id, Name: s}
		if json.Valid(args) {
			tc.Arguments = args
		}
		e := Event{Seq: sec, Type: EventType(s), CreatedAt: at, First: int64(nsec), Message: &Message{
			Role: Role(id), Content: s, Name: s, ToolCallID: id,
			Parts:     []ContentPart{{Type: PartType(s), Content: id}},
			ToolCalls: []ToolCall{tc},
			CreatedAt: at,
		}}
		if !encodableTime(at) {
			return
		}
		checkSameJSON(t, e)
	})
}
