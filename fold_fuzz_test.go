package nous_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nous-go/nous"
)

// eventsFromBytes turns fuzz input into a log: message events, bookkeeping
// events and replacements whose anchors are any earlier seqs, valid or not.
func eventsFromBytes(b []byte) []nous.Event {
	var events []nous.Event
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for len(b) > 0 && len(events) < 512 {
		seq := int64(len(events) + 1)
		e := nous.Event{Seq: seq, CreatedAt: at}
		text := fmt.Sprintf("m%d", seq)
		switch op := b[0] % 4; {
		case op == 0:
			m := nous.Message{Role: nous.RoleUser, Content: text, CreatedAt: at}
			e.Type, e.Message = nous.EventUserMessage, &m
		case op == 1:
			m := nous.Message{Role: nous.RoleAssistant, Content: text, CreatedAt: at}
			e.Type, e.Message = nous.EventAssistantMessage, &m
		case op == 2:
			e.Type = nous.EventStepStart
		case len(b) >= 3 && seq > 1:
			m := nous.Message{Role: nous.RoleSystem, Content: text, CreatedAt: at}
			e.Type, e.Message = nous.EventReplace, &m
			e.First = int64(b[1])%(seq-1) + 1
			e.Last = int64(b[2])%(seq-1) + 1
			b = b[2:]
		default:
			e.Type = nous.EventTurnEnd
		}
		events = append(events, e)
		b = b[1:]
	}
	return events
}

// naiveFold is the fold written as plainly as possible: a slice of (seq,
// text) searched by seq for every replacement.
func naiveFold(events []nous.Event) ([]string, error) {
	type entry struct {
		seq  int64
		text string
	}
	var view []entry
	find := func(seq int64) int {
		return slices.IndexFunc(view, func(e entry) bool { return e.seq == seq })
	}
	for _, e := range events {
		switch {
		case e.Type == nous.EventReplace:
			f, l := find(e.First), find(e.Last)
			if f < 0 || l < 0 || l < f {
				return nil, fmt.Errorf("event %d: bad anchors", e.Seq)
			}
			view = slices.Replace(view, f, l+1, entry{e.Seq, e.Message.Content})
		case e.Type.IsSurface():
			view = append(view, entry{e.Seq, e.Message.Content})
		}
	}
	out := make([]string, len(view))
	for i, e := range view {
		out[i] = e.text
	}
	return out, nil
}

// FuzzFold checks the linear-time fold against the naive one on random
// replacement sequences: the same view, or both refuse the log.
func FuzzFold(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 3, 1, 2, 3, 3, 0, 2, 1, 0})
	f.Add([]byte{1, 1, 3, 1, 0, 3, 0, 0, 2, 3, 2, 2})
	f.Add([]byte{0, 2, 0, 2, 3, 4, 2, 3, 4, 4, 0, 3, 0, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		events := eventsFromBytes(b)
		want, wantErr := naiveFold(events)
		got, err := nous.Fold(events)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Fold error %v, naive fold error %v", err, wantErr)
		}
		if err != nil {
			if !errors.Is(err, nous.ErrInvalidLog) {
				t.Fatalf("Fold error %v does not wrap ErrInvalidLog", err)
			}
			return
		}
		texts := make([]string, len(got))
		for i, m := range got {
			texts[i] = m.Content
		}
		if !slices.Equal(texts, want) {
			t.Fatalf("Fold = %v, naive fold = %v", texts, want)
		}
	})
}
