package nous

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The reader of format version 2, as this package writes it: the log and
// the plain state, decoded in one pass (see wireInput).

// wireLogInput is a version 2 document's log, as read.
type wireLogInput struct {
	ID       string            `json:"id"`
	ParentID *string           `json:"parent_id"`
	ForkSeq  *int64            `json:"fork_seq"`
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
	Events   *[]eventJSON      `json:"events"`
}

// restoreV2 reads the log and the state of a version 2 blob decoded into w.
func restoreV2(w *wireInput) (*restored, error) {
	if w.Log == nil {
		return nil, malformed("log", errors.New("missing"))
	}
	id, err := parseLogID(w.Log.ID)
	if err != nil {
		return nil, malformed("log.id", err)
	}
	var parent uuid.UUID
	var forkSeq int64
	switch {
	case w.Log.ParentID != nil && w.Log.ForkSeq == nil:
		return nil, malformed("log.fork_seq", errors.New("missing in a fork"))
	case w.Log.ParentID == nil && w.Log.ForkSeq != nil:
		return nil, malformed("log.fork_seq", errors.New("without log.parent_id"))
	case w.Log.ParentID != nil:
		if parent, err = parseLogID(*w.Log.ParentID); err != nil {
			return nil, malformed("log.parent_id", err)
		}
		forkSeq = *w.Log.ForkSeq
	}
	if w.Log.Events == nil {
		return nil, malformed("log.events", errors.New("missing"))
	}
	events := make([]Event, len(*w.Log.Events))
	for i := range events {
		e := &events[i]
		if err := (*w.Log.Events)[i].decode(e); err != nil {
			return nil, malformed(fmt.Sprintf("log.events[%d]", i), err)
		}
	}
	l, view, err := restoreLog(id, parent, forkSeq, events, true)
	if err != nil {
		return nil, fmt.Errorf("nous: deserialize: log.%w", err)
	}
	l.name, l.labels = w.Log.Name, cloneLabels(w.Log.Labels)
	return newRestored(w, false, l, view)
}

// parseLogID reads a log ID: a UUID in its canonical 36-character form, not
// the nil UUID.
func parseLogID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	switch {
	case err != nil || len(s) != 36:
		return uuid.Nil, fmt.Errorf("%q is not a UUID", s)
	case id == uuid.Nil:
		return uuid.Nil, errors.New("the nil UUID")
	}
	return id, nil
}

// locateError returns the error of a version 2 blob that the one-pass
// decode refused with cause, naming the field: it decodes the fields one by
// one, the events too.
func locateError(data []byte, cause error) error {
	var raw wireRaw
	if err := json.Unmarshal(data, &raw); err != nil {
		return malformed("", err)
	}
	var array jsonArray
	if err := decodeFields(append(raw.plainFields(new(wireInput)), rawField{"messages", raw.Messages, &array})...); err != nil {
		return err
	}
	var log struct {
		ID       json.RawMessage `json:"id"`
		ParentID json.RawMessage `json:"parent_id"`
		ForkSeq  json.RawMessage `json:"fork_seq"`
		Name     json.RawMessage `json:"name"`
		Labels   json.RawMessage `json:"labels"`
		Events   json.RawMessage `json:"events"`
	}
	if len(raw.Log) == 0 {
		return malformed("", cause)
	}
	if err := json.Unmarshal(raw.Log, &log); err != nil {
		return malformed("log", err)
	}
	err := decodeFields(
		rawField{"log.id", log.ID, new(string)},
		rawField{"log.parent_id", log.ParentID, new(string)},
		rawField{"log.fork_seq", log.ForkSeq, new(int64)},
		rawField{"log.name", log.Name, new(string)},
		rawField{"log.labels", log.Labels, new(map[string]string)},
	)
	if err != nil {
		return err
	}
	var events []json.RawMessage
	if len(log.Events) == 0 {
		return malformed("", cause)
	}
	if err := json.Unmarshal(log.Events, &events); err != nil {
		return malformed("log.events", errors.New("not a list"))
	}
	for i, raw := range events {
		var e Event
		if err := json.Unmarshal(raw, &e); err != nil {
			return malformed(fmt.Sprintf("log.events[%d]", i), err)
		}
	}
	return malformed("", cause)
}
