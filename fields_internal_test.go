package nous

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fields of the persisted types are named in several places: the types'
// struct tags, the JSON writer, the decoders' mirror types and the size
// estimate. These tests derive every field from the types by reflection and
// fill it, so that a field added to a type and forgotten in any of those
// places fails here, without the test being edited.

// runtimeFields are the exported fields of Context that are never written.
var runtimeFields = map[string]bool{
	"Stream": true, "CancellationCheck": true, "Callbacks": true, "Notify": true, "Observer": true, "ApprovalHandler": true, "Logger": true, "Redact": true,
}

// fillValid holds the value fill gives a field of an enumerated type.
var fillValid = map[reflect.Type]any{
	reflect.TypeFor[Role]():      RoleAssistant,
	reflect.TypeFor[PartType]():  PartThinking,
	reflect.TypeFor[EventType](): EventAssistantMessage,
}

// fill sets v, and every field, element and map of it, to a value that is
// not zero. Strings are long, so that a field the size estimate forgets
// makes it fall short.
func fill(v reflect.Value, path string) {
	if valid, ok := fillValid[v.Type()]; ok {
		v.Set(reflect.ValueOf(valid))
		return
	}
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)))
		return
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes(fmt.Appendf(nil, `{"path":%q,"n":[1,2.5,"\u0000"]}`, path+strings.Repeat("a", 500)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(path + `: "quoted" ` + strings.Repeat("x", 1000))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Map: // map[string]any
		v.Set(reflect.ValueOf(map[string]any{"k": path + strings.Repeat("m", 500), "n": 12, "list": []any{1.5, "s"}}))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), path+"[0]")
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && !(v.Type() == reflect.TypeFor[Context]() && runtimeFields[f.Name]) {
				fill(v.Field(i), path+"."+f.Name)
			}
		}
	default:
		panic(fmt.Sprintf("fill: %s is a %s, which fill does not know: teach it", path, v.Type()))
	}
}

func filled[T any](path string) T {
	var v T
	fill(reflect.ValueOf(&v).Elem(), path)
	return v
}

// fieldsSet records, by type, the exported fields that some value seen had
// set, so that a test can show it set them all.
type fieldsSet map[reflect.Type]map[string]bool

func (s fieldsSet) see(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			s.see(v.Elem())
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			for i := range v.Len() {
				s.see(v.Index(i))
			}
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		if s[v.Type()] == nil {
			s[v.Type()] = map[string]bool{}
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && !v.Field(i).IsZero() {
				s[v.Type()][f.Name] = true
				s.see(v.Field(i))
			}
		}
	}
}

// requireAll fails unless every exported field of every type named was set.
func (s fieldsSet) requireAll(t *testing.T, types ...reflect.Type) {
	t.Helper()
	for _, typ := range types {
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() && !(typ == reflect.TypeFor[Context]() && runtimeFields[f.Name]) && !s[typ][f.Name] {
				t.Errorf("no value of the test sets %s.%s", typ.Name(), f.Name)
			}
		}
	}
}

// filledContext returns a context whose every persisted field, and every
// field of every event, message, part and tool call in its log, is set.
func filledContext(t *testing.T) *Context {
	assistant := filled[Message]("assistant")
	assistant.ToolCallID = ""
	tool := filled[Message]("tool")
	tool.Role, tool.ToolCalls = RoleTool, nil

	events := make([]Event, 4)
	for i := range events {
		events[i] = filled[Event](fmt.Sprint("event", i))
		events[i].Seq, events[i].First, events[i].Last, events[i].After, events[i].Call = int64(i+1), 0, 0, 0, nil
	}
	events[1].After = 1 // the tool result goes right after event 1's entry
	events[0].Message = &assistant
	events[1].Type, events[1].Message = EventToolResult, &tool
	events[2].Type, events[2].Message, events[2].First, events[2].Last = EventReplace, &assistant, 1, 2
	call := filled[ToolCall]("recorded")
	events[3].Type, events[3].Message, events[3].Call = EventToolCall, nil, &call

	c := filled[Context]("context")
	l, view, err := restoreLog(uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), 2, events, false)
	require.NoError(t, err)
	c.log, c.view.entries = l, view
	c.ToolCalls = c.log.toolCalls() // the fold of the tool_call event
	c.calls = c.ToolCalls
	return &c
}

func TestEveryFieldRoundTrips(t *testing.T) {
	c := filledContext(t)
	seen := fieldsSet{}
	seen.see(reflect.ValueOf(c))
	for _, e := range c.Log().Events() {
		seen.see(reflect.ValueOf(e))
	}
	seen.requireAll(t, reflect.TypeFor[Context](), reflect.TypeFor[Usage](), reflect.TypeFor[Event](),
		reflect.TypeFor[Message](), reflect.TypeFor[ContentPart](), reflect.TypeFor[ToolCall]())

	data, err := c.Serialize()
	require.NoError(t, err)
	got, err := Deserialize(data)
	require.NoError(t, err)

	assert.Equal(t, c.Log().Events(), got.Log().Events(), "the log's events")
	assert.Equal(t, c.Messages(), got.Messages(), "the view")
	id, seq, _ := c.Log().Parent()
	gotID, gotSeq, _ := got.Log().Parent()
	assert.Equal(t, []any{c.Log().ID(), id, seq}, []any{got.Log().ID(), gotID, gotSeq}, "the log's identity")
	want, have := reflect.ValueOf(c).Elem(), reflect.ValueOf(got).Elem()
	for i := range want.NumField() {
		if f := want.Type().Field(i); f.IsExported() && !runtimeFields[f.Name] {
			assert.Equal(t, want.Field(i).Interface(), have.Field(i).Interface(), "Context.%s", f.Name)
		}
	}

	// One event at a time, as a store writes them, reads back the same.
	for seq := int64(1); seq <= int64(c.Log().Len()); seq++ {
		b, err := c.AppendEventJSON(nil, seq)
		require.NoError(t, err)
		var e Event
		require.NoError(t, json.Unmarshal(b, &e))
		want, _ := c.Log().Event(seq)
		assert.Equal(t, want, e, "event %d through AppendEventJSON", seq)
	}
}

// The size estimate counts every field: each value's estimate is at least
// the length of its encoding.
func TestSizeEstimateCountsEveryField(t *testing.T) {
	c := filledContext(t)
	check := func(what string, estimate int, encode func(*jsonWriter)) {
		t.Helper()
		var out bytes.Buffer
		jw := newJSONWriter(&out)
		encode(jw)
		require.NoError(t, jw.err)
		if n := out.Len(); estimate < n {
			t.Errorf("%s: estimate %d for %d bytes", what, estimate, n)
		}
	}
	for seq := int64(1); seq <= c.log.len(); seq++ {
		e := c.log.event(seq)
		check(fmt.Sprint("event ", seq), eventSize(&e), func(jw *jsonWriter) { jw.event(&e) })
		if m := e.Message; m != nil {
			check(fmt.Sprint("message of event ", seq), messageSize(m), func(jw *jsonWriter) { jw.message(m) })
			for i := range m.Parts {
				check("part", partSize(&m.Parts[i]), func(jw *jsonWriter) { jw.part(&m.Parts[i]) })
			}
			for i := range m.ToolCalls {
				check("tool call", toolCallSize(&m.ToolCalls[i]), func(jw *jsonWriter) { jw.toolCall(&m.ToolCalls[i]) })
			}
		}
	}
	d := c.document(newSanitizer(nil))
	data, err := c.Serialize()
	require.NoError(t, err)
	if d.size() < len(data) {
		t.Errorf("document: estimate %d for %d bytes", d.size(), len(data))
	}
}
