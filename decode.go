package nous

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/nous-go/nous/internal/jsonx"
)

// The shape of the format, as read: one type for both versions, so that a
// version 2 blob is decoded in one pass. Fields whose meaning depends on the
// version are kept raw.
type wireInput struct {
	Version       json.RawMessage `json:"version"`
	Messages      jsonArray       `json:"messages"` // version 1 reads it again
	ToolCalls     json.RawMessage `json:"tool_calls"`
	SystemPrompt  string          `json:"system_prompt"`
	Deps          json.RawMessage `json:"deps"`
	Usage         Usage           `json:"usage"`
	NeedsResponse bool            `json:"needs_response"`
	Iteration     int             `json:"iteration"`
	MaxIterations *int            `json:"max_iterations"`
	StartedAt     json.RawMessage `json:"started_at"`
	AgentName     string          `json:"agent_name"`
	Log           *wireLogInput   `json:"log"`
	Events        *jsonArray      `json:"events"` // the reference library's version 2 instead of log
}

// jsonArray accepts a JSON array or null without decoding or copying it:
// version 2 readers check the messages projection's type and ignore the rest.
type jsonArray struct{}

func (jsonArray) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && (b[0] == '[' || string(b) == "null") {
		return nil
	}
	return errors.New("not an array")
}

// readDocument reads data, a document of any version Deserialize reads,
// warning on logger.
func readDocument(data []byte, logger *slog.Logger) (*restored, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		if !json.Valid(data) {
			return nil, fmt.Errorf("nous: deserialize: not valid JSON: %w", ErrMalformed)
		}
		return nil, fmt.Errorf("nous: deserialize: not a JSON object: %w", ErrMalformed)
	}
	var w wireInput
	err := json.Unmarshal(data, &w)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return nil, fmt.Errorf("nous: deserialize: not valid JSON: %v: %w", err, ErrMalformed)
	}
	raw, reference := w.Version, w.Log == nil && w.Events != nil
	if err != nil {
		// The decode failed on some field; the version, and which version 2
		// it is, decide what that means, so read them alone first.
		var head struct {
			Version, Log, Events json.RawMessage
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, malformed("", err)
		}
		raw, reference = head.Version, head.Log == nil && head.Events != nil
	}
	version, err2 := parseVersion(raw)
	if err2 != nil {
		return nil, err2
	}
	switch {
	case version == 1:
		return deserializeV1(data, logger)
	case reference:
		return deserializeReference(data, logger)
	}
	if err != nil {
		return nil, locateError(data, err)
	}
	return restoreV2(&w)
}

// parseVersion reads the version field: a JSON integer this package knows.
func parseVersion(raw json.RawMessage) (int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return 0, fmt.Errorf("nous: deserialize: no version: %w", ErrMissingVersion)
	}
	n, err := strconv.Atoi(string(t)) // raw is valid JSON: no sign but '-', no leading zero
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("nous: deserialize: version %.40s is not an integer: %w", t, ErrMissingVersion)
	}
	if err != nil || (n != 1 && n != FormatVersion) {
		return 0, fmt.Errorf("nous: deserialize: version %.40s (this package reads 1 and %d): %w", t, FormatVersion, ErrUnsupportedVersion)
	}
	return n, nil
}

// malformed returns the error of a value at place that is not of the shape
// the format says.
func malformed(place string, err error) error {
	if place == "" {
		return fmt.Errorf("nous: deserialize: %s: %w", describe(err), ErrMalformed)
	}
	return fmt.Errorf("nous: deserialize: %s: %s: %w", place, describe(err), ErrMalformed)
}

// describe says what err found wrong in JSON terms, rather than Go's.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msg := "got " + te.Value + ", want " + jsonKind(te.Type)
	// plainEvent and plain are the method-free copies of Event and Message
	// that their UnmarshalJSON decode into.
	field := strings.ReplaceAll(strings.ReplaceAll(te.Field, "plainEvent.", ""), "plain.", "")
	if field == "plain" || field == "" {
		return msg
	}
	return field + ": " + msg
}

// jsonKind names the JSON kind that decodes into a value of type t.
func jsonKind(t reflect.Type) string {
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 time"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// state is the plain state of a context as a document or a store holds
// it: everything but the log and the view. ToolCalls are those kept apart
// from the log, which only a document of version 1 or a state an earlier
// version stored has.
type state struct {
	SystemPrompt  string
	Deps          map[string]any
	Usage         Usage
	NeedsResponse bool
	Iteration     int
	MaxIterations int
	AgentName     string
	StartedAt     time.Time
	ToolCalls     []ToolCall
}

// restored is what a reader makes of a document: its plain state, and the
// log with its view.
type restored struct {
	state state
	log   eventLog
	view  []int64
}

// newRestored returns what a reader made of w, by the rules of version 1
// when v1 is true, with log l and its view.
func newRestored(w *wireInput, v1 bool, l eventLog, view []int64) (*restored, error) {
	st, err := restoreState(w, v1)
	if err != nil {
		return nil, err
	}
	return &restored{state: st, log: l, view: view}, nil
}

// restoreState returns the plain state of w (everything but the messages
// and the log), by the rules of version 1 when v1 is true.
func restoreState(w *wireInput, v1 bool) (state, error) {
	st := state{
		SystemPrompt:  w.SystemPrompt,
		Usage:         w.Usage,
		NeedsResponse: w.NeedsResponse,
		Iteration:     w.Iteration,
		MaxIterations: 10,
		AgentName:     w.AgentName,
	}
	if w.MaxIterations != nil {
		st.MaxIterations = *w.MaxIterations
	}
	deps, err := jsonx.DecodeMap(w.Deps)
	if err != nil {
		return state{}, malformed("deps", err)
	}
	if deps == nil {
		deps = map[string]any{}
	}
	st.Deps = deps
	if st.ToolCalls, err = decodeToolCalls(w.ToolCalls, "tool_calls"); err != nil { // nil for none
		return state{}, err
	}
	if t := bytes.TrimSpace(w.StartedAt); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &st.StartedAt); err != nil {
			if !v1 {
				return state{}, malformed("started_at", err)
			}
			st.StartedAt = time.Time{} // version 1: unparsable reads as null
		}
	}
	return st, nil
}

// decodeToolCalls reads a list of tool calls at place; an empty one is none.
func decodeToolCalls(raw json.RawMessage, place string) ([]ToolCall, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, malformed(place, err)
	}
	if len(items) == 0 {
		return nil, nil // as a message without tool calls holds them
	}
	calls := make([]ToolCall, len(items))
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", place, i)
		if err := json.Unmarshal(item, &calls[i]); err != nil {
			return nil, malformed(at, err)
		}
	}
	return calls, nil
}

// wireRaw is the top level of either version, each field kept raw, for the
// readers that decode field by field: version 1, and locateError.
type wireRaw struct {
	Messages      json.RawMessage `json:"messages"`
	ToolCalls     json.RawMessage `json:"tool_calls"`
	SystemPrompt  json.RawMessage `json:"system_prompt"`
	Deps          json.RawMessage `json:"deps"`
	Usage         json.RawMessage `json:"usage"`
	NeedsResponse json.RawMessage `json:"needs_response"`
	Iteration     json.RawMessage `json:"iteration"`
	MaxIterations json.RawMessage `json:"max_iterations"`
	StartedAt     json.RawMessage `json:"started_at"`
	AgentName     json.RawMessage `json:"agent_name"`
	Log           json.RawMessage `json:"log"`    // version 2 only; version 1 ignores it
	Events        json.RawMessage `json:"events"` // the reference library's version 2 only
}

// rawField is one field to decode on its own: its place in the document, its
// raw JSON (absent when empty) and where to decode it.
type rawField struct {
	place string
	raw   json.RawMessage
	into  any
}

// decodeFields decodes each present field, failing with the place of the
// first that does not fit.
func decodeFields(fields ...rawField) error {
	for _, f := range fields {
		if len(f.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(f.raw, f.into); err != nil {
			return malformed(f.place, err)
		}
	}
	return nil
}

// plainFields are the fields of w that both versions decode the same way,
// to be decoded into in.
func (w *wireRaw) plainFields(in *wireInput) []rawField {
	return []rawField{
		{"system_prompt", w.SystemPrompt, &in.SystemPrompt},
		{"usage", w.Usage, &in.Usage},
		{"needs_response", w.NeedsResponse, &in.NeedsResponse},
		{"iteration", w.Iteration, &in.Iteration},
		{"max_iterations", w.MaxIterations, &in.MaxIterations},
		{"agent_name", w.AgentName, &in.AgentName},
	}
}
