package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

func testFile() []byte {
	id := uuid.Must(uuid.NewV7())
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	b := []byte(magic)
	b = appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 2, Revision: 1, CreatedAt: at, UpdatedAt: at}, state: []byte(`{"version":2}`),
		events: []json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`)}}, 2)
	return appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 3, Revision: 2, CreatedAt: at, UpdatedAt: at}, after: 2, state: []byte(`{}`),
		events: []json.RawMessage{[]byte(`{"seq":3}`)}}, 2)
}

// FuzzParseLog: any file content gives a log, a torn cut or ErrCorrupt,
// never a panic; a log read back writes the same frames again.
func FuzzParseLog(f *testing.F) {
	full := testFile()
	f.Add(full)
	f.Add(full[:len(full)-3])
	f.Add([]byte(magic))
	f.Add([]byte(magicV1))
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	v1 := appendFrame([]byte(magicV1), &frame{info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 1, Revision: 1, CreatedAt: at, UpdatedAt: at},
		state: []byte(`{"version":2}`), events: []json.RawMessage{[]byte(`{"seq":1}`)}, calls: []json.RawMessage{[]byte(`{"id":"a"}`)}}, 1)
	f.Add(v1)
	f.Fuzz(func(t *testing.T, b []byte) {
		lf, err := parseLog(b)
		if err != nil {
			if !errors.Is(err, nous.ErrCorrupt) {
				t.Fatalf("error %v without ErrCorrupt", err)
			}
			return
		}
		if lf.good > int64(len(b)) || (!lf.torn && lf.good != int64(len(b)) && len(b) >= len(magic)) {
			t.Fatalf("good prefix %d of %d bytes, torn %v", lf.good, len(b), lf.torn)
		}
		events, err := lf.eventsAfter(bytes.NewReader(b), 0)
		if err != nil || int64(len(events)) != lf.info.Head {
			t.Fatalf("%d events for head %d: %v", len(events), lf.info.Head, err)
		}
		again, err := parseLog(b[:lf.good])
		if err != nil || again.torn || again.info != lf.info || len(again.frames) != len(lf.frames) {
			t.Fatalf("the good prefix does not read back alone: %v", err)
		}
	})
}

func TestParseLog(t *testing.T) {
	full := testFile()
	lf, err := parseLog(full)
	if err != nil || lf.torn || lf.info.Head != 3 || len(lf.frames) != 2 || string(lf.state) != "{}" {
		t.Fatalf("%+v, %v", lf, err)
	}
	for after, want := range []string{`{"seq":1}`, `{"seq":2}`, `{"seq":3}`} {
		events, err := lf.eventsAfter(bytes.NewReader(full), int64(after))
		if err != nil || len(events) != 3-after || string(events[0]) != want {
			t.Fatalf("events after %d: %q, %v", after, events, err)
		}
	}
	// A frame of another log in the middle is corruption.
	other := appendFrame(nil, &frame{info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 4, Revision: 3}, after: 3, events: []json.RawMessage{[]byte(`{}`)}}, 2)
	b := append(append(append([]byte(nil), full...), other...), full[len(magic):len(magic)+8]...)
	if _, err := parseLog(b); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("a frame of another log: %v", err)
	}
	// Each frame continues the one before: its revision one more, its
	// after the head before it, the same log and incarnation.
	lf, _ = parseLog(full)
	first := full[:lf.frames[1].off]
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	next := func(change func(f *frame)) []byte {
		f := frame{info: nous.LogInfo{ID: lf.info.ID, Head: 3, Revision: 2, CreatedAt: at, UpdatedAt: at}, after: 2, state: []byte(`{}`),
			events: []json.RawMessage{[]byte(`{"seq":3}`)}}
		change(&f)
		return appendFrame(slices.Clone(first), &f, 2)
	}
	if _, err := parseLog(next(func(*frame) {})); err != nil {
		t.Fatalf("a frame that continues the first: %v", err)
	}
	for name, change := range map[string]func(f *frame){
		"a revision skipped":  func(f *frame) { f.info.Revision = 3 },
		"a revision repeated": func(f *frame) { f.info.Revision = 1 },
		"an after not the head": func(f *frame) {
			f.after, f.info.Head = 1, 2
		},
		"another incarnation": func(f *frame) { f.info.Incarnation = uuid.New() },
	} {
		if _, err := parseLog(next(change)); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := parseLog([]byte("NOTALOG!rest")); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("wrong magic: %v", err)
	}
}
