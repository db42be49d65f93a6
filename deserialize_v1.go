package nous

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"
	"github.com/nous-go/nous/internal/jsonx"
)

// The shape of a version 1 message and tool call. Content may be a string,
// a list of content parts or null; arguments an object or a string holding
// one.
type v1Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Metadata   json.RawMessage `json:"metadata"`
}

// readRaw decodes data field by field, as version 1 and the reference's
// version 2 are read: the plain state into a wireInput, the rest left raw.
func readRaw(data []byte) (wireRaw, wireInput, error) {
	var raw wireRaw
	if err := json.Unmarshal(data, &raw); err != nil {
		return raw, wireInput{}, malformed("", err)
	}
	w := wireInput{Deps: raw.Deps, ToolCalls: raw.ToolCalls, StartedAt: raw.StartedAt}
	return raw, w, decodeFields(raw.plainFields(&w)...)
}

// deserializeV1 reads a version 1 blob, warning on logger.
func deserializeV1(data []byte, logger *slog.Logger) (*restored, error) {
	raw, w, err := readRaw(data) // its "log", unknown to version 1, is ignored like any other key
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if t := bytes.TrimSpace(raw.Messages); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &items); err != nil {
			return nil, malformed("messages", errors.New("not a list"))
		}
	}
	at := now()
	events := make([]Event, len(items))
	msgs := make([]Message, len(items))
	for i, item := range items {
		place := fmt.Sprintf("messages[%d]", i)
		var v v1Message
		if err := json.Unmarshal(item, &v); err != nil {
			return nil, malformed(place, err)
		}
		m, err := v.message(place, logger)
		if err != nil {
			return nil, err
		}
		m.CreatedAt = at
		if err := m.validate(); err != nil {
			return nil, fmt.Errorf("nous: deserialize: %s: %w", place, err)
		}
		msgs[i] = m
		events[i] = Event{Seq: int64(i + 1), Type: messageEventType(m.Role), Message: &msgs[i], CreatedAt: at}
	}
	return restoreNew(&w, events, "messages: ")
}

// restoreNew returns what a reader made of w, read by the rules of version 1, with
// a new log holding events: version 1 and the reference's version 2 have no
// log ID. prefix names the events in errors.
func restoreNew(w *wireInput, events []Event, prefix string) (*restored, error) {
	l, view, err := restoreLog(newLogID(), uuid.Nil, 0, events, true)
	if err != nil {
		return nil, fmt.Errorf("nous: deserialize: %s%w", prefix, err)
	}
	return newRestored(w, true, l, view)
}

// message returns the message v holds, at place.
func (v *v1Message) message(place string, logger *slog.Logger) (Message, error) {
	m := Message{Role: Role(v.Role), ToolCallID: v.ToolCallID, Name: v.Name}
	if !m.Role.Valid() {
		logger.Warn("nous: deserialize: unknown role read as user", "place", place, "role", v.Role)
		m.Role = RoleUser
	}
	switch t := bytes.TrimSpace(v.Content); {
	case len(t) == 0 || string(t) == "null":
	case t[0] == '"':
		if err := json.Unmarshal(t, &m.Content); err != nil {
			return Message{}, malformed(place+".content", err)
		}
	case t[0] == '[':
		if err := json.Unmarshal(t, &m.Parts); err != nil {
			return Message{}, malformed(place+".content", err)
		}
	default:
		return Message{}, malformed(place+".content", errors.New("not a string, a list of parts or null"))
	}
	md, err := jsonx.DecodeMap(v.Metadata)
	if err != nil {
		return Message{}, malformed(place+".metadata", err)
	}
	m.Metadata = md
	if m.ToolCalls, err = decodeToolCalls(v.ToolCalls, place+".tool_calls"); err != nil {
		return Message{}, err
	}
	return m, nil
}
