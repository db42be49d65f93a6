package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// readFile returns what the file of log id in s holds, parsed.
func readFile(t *testing.T, s *Store, id uuid.UUID) ([]byte, logFile) {
	t.Helper()
	b, err := os.ReadFile(s.path(id))
	if err != nil {
		t.Fatal(err)
	}
	lf, err := parseLog(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, lf
}

// lastKeys returns the keys of the last event of st, a batch event.
func lastKeys(t *testing.T, st nous.Stored) []string {
	t.Helper()
	var e nous.Event
	if len(st.Events) == 0 || json.Unmarshal(st.Events[len(st.Events)-1], &e) != nil || e.Type != nous.EventBatch {
		t.Fatalf("the log does not end with a batch event")
	}
	list, _ := e.Data[nous.DataKeys].([]any)
	var keys []string
	for _, k := range list {
		keys = append(keys, k.(string))
	}
	return keys
}

// A migration that fails before its file takes the log's name (the new
// file's write or fsync, or the rename) fails the read, so that no reader
// gets the log without its keys, and leaves the file of version 4 as it
// was, byte for byte, with no temporary file; the next read migrates it.
// One whose directory fsync fails has its file in place: the log is
// poisoned until the store is opened again, which reads it migrated, once.
func TestMigrationFaults(t *testing.T) {
	ctx := context.Background()
	for _, op := range []string{"create", "sync", "rename", "syncdir"} {
		t.Run(op, func(t *testing.T) {
			dir, logs := CopyVersion4(t)
			l := logs[2] // the rewritten file
			s, fs := openRecorded(t, dir)
			defer func() { s.Close() }()
			old, _ := readFile(t, s, l.ID)
			injected := errors.New("injected " + op + " failure")
			fs.failing(op, injected)
			if _, err := nous.Load(ctx, s, l.ID); !errors.Is(err, injected) {
				t.Fatalf("a load whose migration failed at %s: %v", op, err)
			}
			fs.failing("", nil)
			if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) != 0 {
				t.Fatalf("temporary files left: %v", tmps)
			}
			if op == "syncdir" {
				if _, err := s.Read(ctx, l.ID, 0); err == nil {
					t.Fatal("a log whose migration's directory fsync failed reads without a reopen")
				}
				s.Close()
				s, _ = openRecorded(t, dir)
			} else if now, lf := readFile(t, s, l.ID); !bytes.Equal(now, old) || lf.version != 4 {
				t.Fatalf("a failed migration left a file of version %d, changed %v", lf.version, !bytes.Equal(now, old))
			}
			c, err := nous.Load(ctx, s, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range l.Keys {
				if !c.HasBatch(k) {
					t.Fatalf("the batch key %q is lost", k)
				}
			}
			if _, lf := readFile(t, s, l.ID); lf.version != version || lf.info.Head != l.Head+1 || c.Log().Len() != int(l.Head)+1 {
				t.Fatalf("after the migration: a file of version %d, head %d, a context of %d events; want %d, %d", lf.version, lf.info.Head, c.Log().Len(), version, l.Head+1)
			}
		})
	}
}

// A file of version 4 whose last frame is torn (a writer of an earlier
// version killed mid-save) is migrated without it: the torn frame's key,
// never acknowledged, is not among the keys, and the file holds no trace
// of it.
func TestMigrationOfATornFile(t *testing.T) {
	ctx := context.Background()
	dir, logs := CopyVersion4(t)
	l := logs[0]
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, lf := readFile(t, s, l.ID)
	torn := frame{info: lf.info, after: lf.info.Head, revision: lf.revision + 1, key: "torn", state: lf.state, events: []json.RawMessage{[]byte(`{}`)}}
	torn.info.Head++
	whole := appendFrame(nil, &torn, 4)
	if err := os.WriteFile(s.path(l.ID), append(b, whole[:len(whole)-3]...), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := nous.Load(ctx, s, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.HasBatch("torn") || !c.HasBatch(l.Keys[0]) || c.Log().Len() != int(l.Head)+1 {
		t.Fatalf("loaded %d events, the torn key known %v; want %d, false", c.Log().Len(), c.HasBatch("torn"), l.Head+1)
	}
	st, err := s.Read(ctx, l.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if keys := lastKeys(t, st); !slices.Equal(keys, l.Keys) {
		t.Fatalf("the migration's keys %q, want %q", keys, l.Keys)
	}
	if now, lf := readFile(t, s, l.ID); lf.torn || int64(len(now)) != lf.good || lf.version != version {
		t.Fatalf("the migrated file: version %d, torn %v, %d bytes of which %d whole", lf.version, lf.torn, len(now), lf.good)
	}
}

// A save that finds a file of version 4 with keys under its lock (an
// earlier version's process saved it as this one looked) migrates it
// first: the save, made without the migration's event, conflicts, and the
// log holds the event.
func TestMigrationBeforeAnAppend(t *testing.T) {
	ctx := context.Background()
	dir, logs := CopyVersion4(t)
	l := logs[0]
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, lf := readFile(t, s, l.ID)
	info := lf.info
	info.Head++
	event := json.RawMessage(`{"seq":1,"type":"turn_start","created_at":"2026-01-02T03:04:05Z"}`)
	err = s.Append(ctx, nous.Batch{Info: info, After: lf.info.Head, State: lf.state, Events: []json.RawMessage{event}})
	if !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a batch after the head of a file of version 4 with keys: %v, want ErrConflict", err)
	}
	st, err := s.Read(ctx, l.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if keys := lastKeys(t, st); !slices.Equal(keys, l.Keys) || st.Info.Head != l.Head+1 {
		t.Fatalf("after the save: head %d, keys %q; want %d, %q", st.Info.Head, keys, l.Head+1, l.Keys)
	}
}

// A file of version 4 without keys (its batches were stored without one)
// needs no event: a read leaves it as it is, and the next save rewrites it
// in version 5, its events and the save's alone.
func TestVersion4FileWithoutKeys(t *testing.T) {
	ctx := context.Background()
	c := nous.NewContext()
	if err := c.AddMessage(nous.UserMessage("one")); err != nil {
		t.Fatal(err)
	}
	raw, err := c.AppendEventJSON(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	state, err := c.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(state, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "messages")
	delete(doc, "log")
	delete(doc, "tool_calls")
	state, _ = json.Marshal(doc)
	at := time.Now().UTC()
	info := nous.LogInfo{ID: c.Log().ID(), Incarnation: uuid.New(), CreatedAt: at, UpdatedAt: at, Head: 1}
	b := appendFrame([]byte(magicV4), &frame{info: info, revision: 1, state: state, events: []json.RawMessage{raw}}, 4)
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.WriteFile(s.path(info.ID), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := nous.Load(ctx, s, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := readFile(t, s, info.ID); got.Log().Len() != 1 || !bytes.Equal(now, b) {
		t.Fatalf("a read of a file of version 4 without keys: %d events, the file changed %v; want 1, unchanged", got.Log().Len(), !bytes.Equal(now, b))
	}
	if err := got.AddMessage(nous.UserMessage("two")); err != nil {
		t.Fatal(err)
	}
	if err := got.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, lf := readFile(t, s, info.ID); lf.version != version || len(lf.frames) != 1 || lf.info.Head != 3 {
		t.Fatalf("after a save: version %d, %d frames, head %d; want %d, 1, 3 (its event, the save's message and batch event)", lf.version, len(lf.frames), lf.info.Head, version)
	}
}
