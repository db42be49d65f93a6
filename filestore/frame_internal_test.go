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
	b = appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 2, CreatedAt: at, UpdatedAt: at, Name: "chat 7", Labels: map[string]string{"app": "a", "user": "42"}},
		state: []byte(`{"version":2}`), events: []json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`)}}, version)
	return appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 3, CreatedAt: at, UpdatedAt: at}, after: 2, state: []byte(`{}`),
		events: []json.RawMessage{[]byte(`{"seq":3}`)}}, version)
}

// testFileV4 returns a file of version 4: a rewritten first frame with the
// marks of two batches and its own key, then a frame with a key.
func testFileV4() []byte {
	id := uuid.Must(uuid.NewV7())
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	b := appendFrame([]byte(magicV4), &frame{info: nous.LogInfo{ID: id, Head: 2, CreatedAt: at, UpdatedAt: at}, revision: 3, key: "k3",
		marks: []mark{{key: "k1", revision: 1, head: 1}, {key: "k2", revision: 2, head: 2}},
		state: []byte(`{"version":2}`), events: []json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`)}}, 4)
	return appendFrame(b, &frame{info: nous.LogInfo{ID: id, Head: 3, CreatedAt: at, UpdatedAt: at}, after: 2, revision: 4, key: "k4", state: []byte(`{}`),
		events: []json.RawMessage{[]byte(`{"seq":3}`)}}, 4)
}

// FuzzParseLog: any file content gives a log, a torn cut or ErrCorrupt,
// never a panic; a log read back writes the same frames again.
func FuzzParseLog(f *testing.F) {
	full := testFile()
	f.Add(full)
	f.Add(full[:len(full)-3])
	f.Add(testFileV4())
	f.Add([]byte(magic))
	f.Add([]byte(magicV1))
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	v1 := appendFrame([]byte(magicV1), &frame{info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 1, CreatedAt: at, UpdatedAt: at}, revision: 1,
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
		if err != nil || again.torn || !reflect.DeepEqual(again.info, lf.info) || len(again.frames) != len(lf.frames) || !slices.Equal(again.keys, lf.keys) {
			t.Fatalf("the good prefix does not read back alone: %v", err)
		}
	})
}

func TestParseLog(t *testing.T) {
	full := testFile()
	lf, err := parseLog(full)
	if err != nil || lf.torn || lf.info.Head != 3 || len(lf.frames) != 2 || string(lf.state) != "{}" || lf.info.Name != "chat 7" || lf.info.Labels["user"] != "42" || lf.keyed != nil {
		t.Fatalf("%+v, %v", lf, err)
	}
	for after, want := range []string{`{"seq":1}`, `{"seq":2}`, `{"seq":3}`} {
		events, err := lf.eventsAfter(bytes.NewReader(full), int64(after))
		if err != nil || len(events) != 3-after || string(events[0]) != want {
			t.Fatalf("events after %d: %q, %v", after, events, err)
		}
	}
	// A frame of another log in the middle is corruption.
	other := appendFrame(nil, &frame{info: nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 4}, after: 3, events: []json.RawMessage{[]byte(`{}`)}}, version)
	b := append(append(append([]byte(nil), full...), other...), full[len(magic):len(magic)+8]...)
	if _, err := parseLog(b); !errors.Is(err, nous.ErrCorrupt) {
		t.Fatalf("a frame of another log: %v", err)
	}
	// Each frame continues the one before: its after the head before it,
	// the same log and incarnation.
	first := full[:lf.frames[1].off]
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	next := func(change func(f *frame)) []byte {
		f := frame{info: nous.LogInfo{ID: lf.info.ID, Head: 3, CreatedAt: at, UpdatedAt: at}, after: 2, state: []byte(`{}`),
			events: []json.RawMessage{[]byte(`{"seq":3}`)}}
		change(&f)
		return appendFrame(slices.Clone(first), &f, version)
	}
	if _, err := parseLog(next(func(*frame) {})); err != nil {
		t.Fatalf("a frame that continues the first: %v", err)
	}
	for name, change := range map[string]func(f *frame){
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

// A file of version 4 is read with its batch keys, in the order the
// batches were stored: a rewritten first frame's marks, its own key, then
// each later frame's. Its frames' revisions rise one at a time; a
// rewritten first frame holds marks in order (keys once each, revisions
// rising before its own, heads not falling up to its own), and no later
// frame holds marks.
func TestParseLogVersion4(t *testing.T) {
	full := testFileV4()
	lf, err := parseLog(full)
	if err != nil || lf.version != 4 || lf.info.Head != 3 || lf.revision != 4 || !slices.Equal(lf.keys, []string{"k1", "k2", "k3", "k4"}) {
		t.Fatalf("version %d, head %d, revision %d, keys %q, %v", lf.version, lf.info.Head, lf.revision, lf.keys, err)
	}
	first := full[:lf.frames[1].off]
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	next := func(change func(f *frame)) []byte {
		f := frame{info: nous.LogInfo{ID: lf.info.ID, Head: 3, CreatedAt: at, UpdatedAt: at}, after: 2, revision: 4, state: []byte(`{}`),
			events: []json.RawMessage{[]byte(`{"seq":3}`)}}
		change(&f)
		b := appendFrame(slices.Clone(first), &f, 4)
		return append(b, b[len(magic):len(magic)+4]...) // not the torn last frame
	}
	for name, change := range map[string]func(f *frame){
		"a revision skipped":     func(f *frame) { f.revision = 5 },
		"a revision repeated":    func(f *frame) { f.revision = 3 },
		"a key twice":            func(f *frame) { f.key = "k2" },
		"a key CheckKey refuses": func(f *frame) { f.key = "k\x00" },
		"marks in a later frame": func(f *frame) { f.marks = []mark{{key: "k9", revision: 1, head: 1}} },
	} {
		if _, err := parseLog(next(change)); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	rewritten := func(change func(f *frame)) []byte {
		f := frame{info: nous.LogInfo{ID: lf.info.ID, Head: 3, CreatedAt: at, UpdatedAt: at}, revision: 4, key: "k4", state: []byte(`{}`),
			marks:  []mark{{key: "k1", revision: 1, head: 1}, {key: "k2", revision: 2, head: 1}, {key: "k3", revision: 3, head: 3}},
			events: []json.RawMessage{[]byte(`{"seq":1}`), []byte(`{"seq":2}`), []byte(`{"seq":3}`)}}
		change(&f)
		return appendFrame([]byte(magicV4), &f, 4)
	}
	if got, err := parseLog(rewritten(func(*frame) {})); err != nil || !slices.Equal(got.keys, []string{"k1", "k2", "k3", "k4"}) || got.revision != 4 {
		t.Fatalf("a rewritten first frame: keys %q, revision %d, %v", got.keys, got.revision, err)
	}
	for name, change := range map[string]func(f *frame){
		"a key twice":            func(f *frame) { f.marks[1].key = "k1" },
		"the frame's key marked": func(f *frame) { f.marks[2].key = "k4" },
		"an empty key":           func(f *frame) { f.marks[0].key = "" },
		"revisions falling":      func(f *frame) { f.marks[1].revision = 1 },
		"a mark of its revision": func(f *frame) { f.marks[2].revision = 4 },
		"heads falling":          func(f *frame) { f.marks[1].head = 0 },
		"a head past its own":    func(f *frame) { f.marks[2].head = 4 },
	} {
		if _, err := parseLog(rewritten(change)); !errors.Is(err, nous.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
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
		info := nous.LogInfo{ID: uuid.Must(uuid.NewV7()), Head: 0, Incarnation: uuid.New(), CreatedAt: at, UpdatedAt: time.Now()}
		if err := s.Append(ctx, nous.Batch{Info: info, State: []byte(`{"version":2}`)}); err == nil || !strings.Contains(err.Error(), "1678 to 2262") {
			t.Errorf("a log created in %s: %v", name, err)
		}
	}
}
