package filestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/filestore"
)

// batchKeysOf returns the keys of event e when it is a batch event; ok
// false for any other.
func batchKeysOf(t *testing.T, raw json.RawMessage) (keys []string, e nous.Event, ok bool) {
	t.Helper()
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if e.Type != nous.EventBatch {
		return nil, e, false
	}
	list, _ := e.Data[nous.DataKeys].([]any)
	for _, k := range list {
		s, _ := k.(string)
		keys = append(keys, s)
	}
	return keys, e, true
}

// migrationEvents returns the seqs of the events of log l, as s stores
// it, that list l's keys of version 4: the migration's.
func migrationEvents(t *testing.T, s nous.Store, l filestore.Version4Log) []int64 {
	t.Helper()
	st, err := s.Read(context.Background(), l.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, raw := range st.Events {
		if keys, e, ok := batchKeysOf(t, raw); ok && slices.Equal(keys, l.Keys) {
			seqs = append(seqs, e.Seq)
		}
	}
	return seqs
}

// fileVersion returns the format version of the file of log id in dir.
func fileVersion(t *testing.T, dir string, id uuid.UUID) byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, id.String()+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return filestore.FileVersion(b)
}

// checkLoaded checks that c, loaded from a log of version 4 once
// migrated, holds what the log held, knows every key of its batches, and
// ends with the migration's event.
func checkLoaded(t *testing.T, c *nous.Context, l filestore.Version4Log) {
	t.Helper()
	var texts []string
	for _, m := range c.Messages() {
		texts = append(texts, m.Content)
	}
	if !slices.Equal(texts, l.Texts) || !reflect.DeepEqual(c.Deps, l.Deps) {
		t.Fatalf("log %s loaded messages %q, deps %v; want %q, %v", l.ID, texts, c.Deps, l.Texts, l.Deps)
	}
	if parent, seq, _ := c.Log().Parent(); parent != l.Parent || seq != l.ForkSeq {
		t.Fatalf("log %s loaded as a fork of %s at %d, want %s at %d", l.ID, parent, seq, l.Parent, l.ForkSeq)
	}
	for _, k := range l.Keys {
		if !c.HasBatch(k) {
			t.Fatalf("log %s: the batch key %q of its file of version 4 is lost", l.ID, k)
		}
	}
	if c.HasBatch("no such batch") {
		t.Fatalf("log %s has a batch it never stored", l.ID)
	}
	if c.Log().Len() != int(l.Head)+1 {
		t.Fatalf("log %s loaded with %d events, want its %d and the migration's", l.ID, c.Log().Len(), l.Head)
	}
}

// Files of version 4, as the last version to write them saved them (a
// log of appended frames, a fork, a file rewritten with the marks of the
// batches before and appended to since), load with every batch key known:
// the first read migrates each file to version 5 with one batch event
// after its head, of every key in the order the batches were stored,
// durably. A key the log holds is refused; a save on top works, and a
// reopened store reads each log with the migration's event once.
func TestVersion4FilesMigrate(t *testing.T) {
	ctx := context.Background()
	dir, logs := filestore.CopyVersion4(t)
	s := open(t, dir)
	before := time.Now()
	for _, l := range logs {
		if v := fileVersion(t, dir, l.ID); v != 4 {
			t.Fatalf("the fixture of log %s is of version %d, want 4", l.ID, v)
		}
		c, err := nous.Load(ctx, s, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkLoaded(t, c, l)
		st, err := s.Read(ctx, l.ID, l.Head)
		if err != nil || len(st.Events) != 1 {
			t.Fatalf("log %s: %d events after its old head, %v; want 1", l.ID, len(st.Events), err)
		}
		keys, e, ok := batchKeysOf(t, st.Events[0])
		if !ok || !slices.Equal(keys, l.Keys) || e.Seq != l.Head+1 || e.CreatedAt.Before(before.Add(-time.Second)) || e.CreatedAt.After(time.Now()) {
			t.Fatalf("log %s: the event after its old head is %s, want a batch event of seq %d listing %q made now", l.ID, st.Events[0], l.Head+1, l.Keys)
		}
		if v := fileVersion(t, dir, l.ID); v != 5 {
			t.Fatalf("log %s: its file is of version %d once read, want 5", l.ID, v)
		}
		if l.Name != "" {
			info, err := s.Lookup(ctx, l.Name)
			if err != nil || info.ID != l.ID || info.Head != l.Head+1 || !reflect.DeepEqual(info.Labels, l.Labels) {
				t.Fatalf("lookup of %q: %+v, %v", l.Name, info, err)
			}
		}
		if err := c.AddMessage(nous.UserMessage("after the migration")); err != nil {
			t.Fatal(err)
		}
		c.SetBatchKey(l.Keys[0])
		if err := c.Save(ctx, s); !errors.Is(err, nous.ErrLanded) {
			t.Fatalf("log %s: a save of the key %q its file of version 4 held: %v, want ErrLanded", l.ID, l.Keys[0], err)
		}
		c.SetBatchKey("after the migration")
		if err := c.Save(ctx, s); err != nil {
			t.Fatalf("log %s: a save on top of the migration: %v", l.ID, err)
		}
	}
	s.Close()
	s = open(t, dir)
	for _, l := range logs {
		c, err := nous.Load(ctx, s, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !c.HasBatch("after the migration") || c.Messages()[c.Len()-1].Content != "after the migration" {
			t.Fatalf("log %s: the save after the migration is lost", l.ID)
		}
		for _, k := range l.Keys {
			if !c.HasBatch(k) {
				t.Fatalf("log %s: the batch key %q is lost after a reopen", l.ID, k)
			}
		}
		if seqs := migrationEvents(t, s, l); !slices.Equal(seqs, []int64{l.Head + 1}) {
			t.Fatalf("log %s: the migration's event at seqs %v, want once, at %d", l.ID, seqs, l.Head+1)
		}
		if v := fileVersion(t, dir, l.ID); v != 5 {
			t.Fatalf("log %s: its file is of version %d after a save, want 5", l.ID, v)
		}
	}
}

// Watch shows the migration's event once: a watch of a log of version 4
// yields its events, then the migration's, and one of the same log after
// a reopen, from 0 or from the old head, yields it once again, nothing
// more.
func TestVersion4WatchShowsTheMigrationOnce(t *testing.T) {
	dir, logs := filestore.CopyVersion4(t)
	l := logs[0]
	watch := func(s *filestore.Store, after int64) []json.RawMessage {
		ctx, cancel := context.WithTimeout(context.Background(), 3*filestore.PollInterval)
		defer cancel()
		var got []json.RawMessage
		for e, err := range s.Watch(ctx, l.ID, after) {
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatal(err)
				}
				break
			}
			raw, _ := json.Marshal(e)
			got = append(got, raw)
		}
		return got
	}
	check := func(got []json.RawMessage, after int64) {
		t.Helper()
		if int64(len(got)) != l.Head+1-after {
			t.Fatalf("watched %d events after seq %d, want %d", len(got), after, l.Head+1-after)
		}
		if keys, e, ok := batchKeysOf(t, got[len(got)-1]); !ok || e.Seq != l.Head+1 || !slices.Equal(keys, l.Keys) {
			t.Fatalf("the last event watched: %s, want the migration's", got[len(got)-1])
		}
	}
	s := open(t, dir)
	first := watch(s, 0)
	check(first, 0)
	s.Close()
	s = open(t, dir)
	again := watch(s, 0)
	check(again, 0)
	if string(again[len(again)-1]) != string(first[len(first)-1]) {
		t.Fatalf("the migration's event changed after a reopen: %s, then %s", first[len(first)-1], again[len(again)-1])
	}
	check(watch(s, l.Head), l.Head)
}

// List and Lookup give the logs of files of version 4 as migrated: their
// head is past the migration's event, their files of version 5.
func TestVersion4ListMigrates(t *testing.T) {
	ctx := context.Background()
	dir, logs := filestore.CopyVersion4(t)
	s := open(t, dir)
	heads := map[uuid.UUID]int64{}
	for info, err := range s.List(ctx, nous.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		heads[info.ID] = info.Head
	}
	for _, l := range logs {
		if heads[l.ID] != l.Head+1 || fileVersion(t, dir, l.ID) != 5 {
			t.Fatalf("log %s listed with head %d, its file of version %d; want %d, 5", l.ID, heads[l.ID], fileVersion(t, dir, l.ID), l.Head+1)
		}
		if seqs := migrationEvents(t, s, l); !slices.Equal(seqs, []int64{l.Head + 1}) {
			t.Fatalf("log %s: the migration's event at seqs %v, want once, at %d", l.ID, seqs, l.Head+1)
		}
	}
}

// Handles of one directory that read the same logs of version 4 at once
// migrate each once: the one that takes a log's lock first rewrites its
// file, the others find it rewritten.
func TestVersion4MigratesOnceAcrossHandles(t *testing.T) {
	if !filestore.Shared {
		t.Skip("one handle of a directory at a time here")
	}
	ctx := context.Background()
	dir, logs := filestore.CopyVersion4(t)
	var stores []*filestore.Store
	for range 4 {
		stores = append(stores, open(t, dir))
	}
	var wg sync.WaitGroup
	for _, s := range stores {
		for _, l := range logs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := nous.Load(ctx, s, l.ID)
				if err != nil {
					t.Error(err)
					return
				}
				for _, k := range l.Keys {
					if !c.HasBatch(k) {
						t.Errorf("log %s: the batch key %q is lost", l.ID, k)
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, s := range stores {
		for _, l := range logs {
			if seqs := migrationEvents(t, s, l); !slices.Equal(seqs, []int64{l.Head + 1}) {
				t.Fatalf("log %s: the migration's event at seqs %v, want once, at %d", l.ID, seqs, l.Head+1)
			}
		}
	}
}
