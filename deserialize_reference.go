package nous

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/nous-go/nous/internal/jsonx"
)

// The reference library, Nous v0.17.1, writes a "version": 2 document of its
// own: the plain state of version 1 and a top-level events list instead of
// our log, told apart from ours by having no log key. FORMAT.md says how its
// events become ours.

// referenceEvent is an event of the reference's document: seq from 0, the
// message fields of a message event inside data.
type referenceEvent struct {
	Seq  *int64          `json:"seq"`
	Type EventType       `json:"type"`
	Time *time.Time      `json:"time"`
	Data json.RawMessage `json:"data"`
}

// referenceData is the data of a message event: version 1's message fields
// and the reference's extras.
type referenceData struct {
	v1Message
	ReasoningContent *string         `json:"reasoning_content"`
	Source           string          `json:"source"`
	SurfaceOp        json.RawMessage `json:"surface_op"`
}

// referenceDataKeys are the keys of referenceData; a message event's other
// keys are kept in its event's Data.
var referenceDataKeys = []string{"content", "tool_calls", "tool_call_id", "name", "metadata", "reasoning_content", "source", "surface_op", "role"}

// deserializeReference reads the reference's version 2 document, warning on
// logger. Like version 1, it has no log ID: the log gets a new one.
func deserializeReference(data []byte, logger *slog.Logger) (*restored, error) {
	raw, w, err := readRaw(data)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw.Events, &items); err != nil {
		return nil, malformed("events", errors.New("not a list"))
	}
	events := make([]Event, len(items))
	var view positions
	for i, item := range items {
		place := fmt.Sprintf("events[%d]", i)
		var r referenceEvent
		if err := json.Unmarshal(item, &r); err != nil {
			return nil, malformed(place, err)
		}
		e, err := r.event(int64(i), place, &view, logger)
		if err != nil {
			return nil, err
		}
		events[i] = e
	}
	return restoreNew(&w, events, "")
}

// event returns r, the event at index i, as an event of ours: seq i+1, and a
// replacement by positions as a replace event by anchors, found in view,
// which it keeps up to date.
func (r *referenceEvent) event(i int64, place string, view *positions, logger *slog.Logger) (Event, error) {
	switch {
	case r.Seq == nil || *r.Seq != i:
		return Event{}, fmt.Errorf("nous: deserialize: %s: seq %v, want %d: %w", place, jsonValue(r.Seq), i, ErrInvalidLog)
	case r.Time == nil:
		return Event{}, malformed(place+".time", errors.New("missing"))
	case r.Type.IsBookkeeping():
		d, err := jsonx.DecodeMap(r.Data)
		if err != nil {
			return Event{}, malformed(place+".data", err)
		}
		return Event{Seq: i + 1, Type: r.Type, Data: d, CreatedAt: *r.Time}, nil
	case !r.Type.IsSurface() || r.Type == EventReplace:
		return Event{}, fmt.Errorf("nous: deserialize: %s: event type %q: %w", place, r.Type, ErrUnknownEventType)
	}
	var d referenceData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return Event{}, malformed(place+".data", err)
	}
	d.Role = roleOf(r.Type)
	m, err := d.message(place+".data", logger)
	if err != nil {
		return Event{}, err
	}
	if d.ReasoningContent != nil {
		m.ReasoningContent = *d.ReasoningContent
	}
	m.CreatedAt = *r.Time
	e := Event{Seq: i + 1, Type: r.Type, Message: &m, CreatedAt: *r.Time}
	if e.Data, err = extraData(r.Data, d.Source); err != nil {
		return Event{}, malformed(place+".data", err)
	}
	if t := bytes.TrimSpace(d.SurfaceOp); len(t) == 0 || string(t) == "null" || string(t) == `"append"` {
		view.add(e.Seq, i)
		return e, nil
	}
	start, stop, err := replaceOp(d.SurfaceOp)
	if err != nil {
		return Event{}, malformed(place+".data.surface_op", err)
	}
	if e.First, e.Last, err = view.replace(e.Seq, start, stop); err != nil {
		return Event{}, fmt.Errorf("nous: deserialize: %s: %w", place, err)
	}
	e.Type = EventReplace
	return e, nil
}

// roleOf returns the role of the message a message event type adds.
func roleOf(t EventType) string {
	for _, r := range []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool} {
		if messageEventType(r) == t {
			return string(r)
		}
	}
	return ""
}

// extraData returns a message event's Data: its source, and every key of
// its data that is not a message field, so that nothing is lost.
func extraData(raw json.RawMessage, source string) (map[string]any, error) {
	all, err := jsonx.DecodeMap(raw)
	if err != nil {
		return nil, err
	}
	for _, k := range referenceDataKeys {
		delete(all, k)
	}
	if source != "" {
		all[DataSource] = source
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}

// replaceOp reads a surface_op: ["replace", start, stop], two positions.
func replaceOp(raw json.RawMessage) (start, stop int64, err error) {
	var op []json.RawMessage
	if err := json.Unmarshal(raw, &op); err != nil || len(op) != 3 || string(op[0]) != `"replace"` {
		return 0, 0, fmt.Errorf("%.60s is not [\"replace\", start, stop]", raw)
	}
	if json.Unmarshal(op[1], &start) != nil || json.Unmarshal(op[2], &stop) != nil || start < 0 || stop < start {
		return 0, 0, fmt.Errorf("%.60s does not name positions start <= stop", raw)
	}
	return start, stop, nil
}

func jsonValue(p *int64) any {
	if p == nil {
		return "missing"
	}
	return *p
}

// positions is the reference's view while its events are read: the seqs
// (ours) of the entries, with their positions, in view order, which is the
// order of their positions. An appended event's position is its reference
// seq; a replacement's is the start of the range it replaces.
type positions []positioned

type positioned struct{ seq, pos int64 }

// add appends the entry of an appended event: its position, its reference
// seq, is past every position in the view.
func (v *positions) add(seq, pos int64) {
	*v = append(*v, positioned{seq, pos})
}

// replace puts the entry of a replacement, seq, in place of the entries
// whose positions are in start..stop, and returns the seqs of the first and
// the last it shadows: the anchors of our replace event. A range that
// shadows nothing is an error: our log cannot insert a message.
func (v *positions) replace(seq, start, stop int64) (first, last int64, err error) {
	i := sort.Search(len(*v), func(k int) bool { return (*v)[k].pos >= start })
	j := sort.Search(len(*v), func(k int) bool { return (*v)[k].pos > stop })
	if i == j {
		return 0, 0, fmt.Errorf("replace of positions %d..%d shadows no message of the view: %w", start, stop, ErrInvalidLog)
	}
	first, last = (*v)[i].seq, (*v)[j-1].seq
	*v = slices.Replace(*v, i, j, positioned{seq, start})
	return first, last, nil
}
