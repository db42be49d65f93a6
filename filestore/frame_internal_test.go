package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

func testFile() []byte {
	id := uuid.Must(uuid.NewV7())
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	b := []byte(magic)
	b = appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 2, Revision: 1, CreatedAt: at, UpdatedAt: at, Name: "chat 7", Labels: map[string]string{"app": "a", "user": "42"}},
		key: "k1", state: []byte(`{"version":2}`), events: []json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`)}}, version)
	return appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 3, Revision: 2, CreatedAt: at, UpdatedAt: at}, after: 2, key: "k2", state: []byte(`{}`),
		events: []json.RawMessage{[]byte(`{"seq":3}`)}}, version)
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
		if err != nil || again.torn || !reflect.DeepEqual(again.info, lf.info) || len(again.frames) != len(lf.frames) {
			t.Fatalf("the good prefix does not read back alone: %v", err)
		}
	})
}

func TestParseLog(t *testing.T) {
	full := testFile()
	lf, err := parseLog(full)
	if err != nil || lf.torn || lf.info.Head != 3 || len(lf.frames) != 2 || string(lf.state) != "{}" || lf.info.Name != "chat 7" || lf.info.Labels["user"] != "42" {
		t.Fatalf("%+v, %v", lf, err)
	}
	for after, want := range []string{`{"seq":1}`, `{"seq":2}`, `{"seq":3}`} {
		events, err := lf.eventsAfter(bytes.NewReader(full), int64(after))
		if err != nil || len(events) != 3-after || string(events[0]) != want {
			t.Fatalf("events after %d: %q, %v", after, events, err)
		}
	}
	// A frame of another log in the middle is corruption.
	other := appendFrame(nil, &frame{info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 4, Revision: 3}, after: 3, events: []json.RawMessage{[]byte(`{}`)}}, version)
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
		return appendFrame(slices.Clone(first), &f, version)
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
	// A rewritten first frame holds the marks of the batches it took in:
	// keys once each, revisions rising before its own, heads not falling
	// up to its own; no later frame holds marks.
	rewritten := func(change func(f *frame)) []byte {
		f := frame{info: nous.LogInfo{ID: lf.info.ID, Head: 3, Revision: 4, CreatedAt: at, UpdatedAt: at}, key: "k4", state: []byte(`{}`),
			marks:  []nous.BatchMark{{Key: "k1", Revision: 1, Head: 1}, {Key: "k2", Revision: 2, Head: 1}, {Key: "k3", Revision: 3, Head: 3}},
			events: []json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`), []byte(`{"seq":3}`)}}
		change(&f)
		return appendFrame([]byte(magic), &f, version)
	}
	if got, err := parseLog(rewritten(func(*frame) {})); err != nil || len(got.marks) != 4 || !got.keys["k2"] || got.info.Revision != 4 {
		t.Fatalf("a rewritten first frame: %d marks, revision %d, %v", len(got.marks), got.info.Revision, err)
	}
	for name, change := range map[string]func(f *frame){
		"a key twice":            func(f *frame) { f.marks[1].Key = "k1" },
		"the frame's key marked": func(f *frame) { f.marks[2].Key = "k4" },
		"an empty key":           func(f *frame) { f.marks[0].Key = "" },
		"revisions falling":      func(f *frame) { f.marks[1].Revision = 1 },
		"a mark of its revision": func(f *frame) { f.marks[2].Revision = 4 },
		"heads falling":          func(f *frame) { f.marks[1].Head = 0 },
		"a head past its own":    func(f *frame) { f.marks[2].Head = 4 },
		"marks in a later frame": func(f *frame) { f.marks = nil }, // and a later frame with some, below
	} {
		b := rewritten(change)
		if name == "marks in a later frame" {
			later := frame{info: nous.LogInfo{ID: lf.info.ID, Head: 4, Revision: 5, CreatedAt: at, UpdatedAt: at}, after: 3, state: []byte(`{}`),
				marks: []nous.BatchMark{{Key: "k9", Revision: 1, Head: 1}}, events: []json.RawMessage{[]byte(`{"seq":4}`)}}
			b = appendFrame(b, &later, version)
			b = append(b, b[len(magic):len(magic)+4]...) // not the torn last frame
		}
		if _, err := parseLog(b); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := parseLog([]byte("NOTALOG!rest")); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("wrong magic: %v", err)
	}
}

// A batch over what a frame holds, or a time outside the years a frame's
// Unix nanoseconds hold, is refused with a clear error before anything is
// written; the log saves on once the batch fits.
func TestFrameLimits(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("one")); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	defer func(old int64) { maxPayload = old }(maxPayload)
	maxPayload = 4096
	if err := c.AddMessage(nous.UserMessage(strings.Repeat("x", 5000))); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx, s); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a batch over the frame's bound: %v, want ErrTooLarge", err)
	}
	got, err := nous.Load(ctx, s, c.Log().ID())
	if err != nil || got.Len() != 1 {
		t.Fatalf("after a refused batch the log holds %d messages (%v), want 1", got.Len(), err)
	}
	maxPayload = 1 << 20
	if err := c.Save(ctx, s); err != nil {
		t.Fatalf("the batch once it fits: %v", err)
	}

	for name, at := range map[string]time.Time{"year 1500": time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), "year 2300": time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		info := nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 0, Revision: 1, Incarnation: uuid.New(), CreatedAt: at, UpdatedAt: time.Now()}
		if err := s.Append(ctx, nous.Batch{Info: info, State: []byte(`{"version":2}`)}); err == nil || !strings.Contains(err.Error(), "1678 to 2262") {
			t.Errorf("a log created in %s: %v", name, err)
		}
	}
}
