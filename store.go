package nous

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"github.com/google/uuid"
)

// LogInfo describes a stored log.
type LogInfo struct {
	ID      uuid.UUID
	Parent  uuid.UUID // uuid.Nil unless the log is a fork
	ForkSeq int64     // the parent's seq it forked at; 0 unless a fork
	Head    int64     // seq of the log's last stored event (a fork's seqs continue its parent's)
	// Incarnation is a random ID the log's first save gives it: a log
	// deleted and saved again under the same ID has another, so a writer
	// that saw the old one conflicts instead of appending to the new one.
	// Never the zero UUID: stores refuse a batch without one.
	Incarnation uuid.UUID
	CreatedAt   time.Time // when the log's context was created (the time in its UUID v7)
	UpdatedAt   time.Time // time of the last save
	// Name is the log's name, unique in its store ([WithLogName]); "" for
	// none. Labels are its labels ([WithLogLabels]); nil for none. Both
	// are what its first batch gave: a store keeps them as they were.
	Name   string
	Labels map[string]string
}

// HasLabels reports whether i's labels hold every key of want with its
// value: what [ListOptions.Labels] selects. Every log has the labels of an
// empty want.
func (i *LogInfo) HasLabels(want map[string]string) bool {
	for k, v := range want {
		if got, ok := i.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// ListOptions selects the logs [Store.List] yields.
type ListOptions struct {
	After uuid.UUID // cursor: only logs whose ID sorts after this one; uuid.Nil lists from the start
	Limit int       // at most this many; 0 means no limit
	// Labels selects the logs whose labels hold every one of these pairs
	// ([LogInfo.HasLabels]); nil or empty selects every log. Limit counts
	// the logs selected.
	Labels map[string]string
}

// Batch is one save of a log: the events appended since the head the saver
// last saw, and the state of its context. A [Store] keeps it whole or not at
// all. Everything that grows with a run is an event; the state does not.
//
// A batch Save sends holds at least one event, the last an [EventBatch]
// naming it, so that every batch moves the head: the head alone tells
// whether a log moved on, and a batch that landed when its save's reply
// was lost is found among the stored events. A store needs to know none
// of this.
type Batch struct {
	// Info names the log and, for its first batch, says what it is (ID,
	// Parent, ForkSeq, CreatedAt, Incarnation, Name, Labels). Head is
	// After+len(Events), UpdatedAt the time of the save.
	Info LogInfo
	// After is the stored head the saver expects: 0 for a new log.
	After int64
	// State is the state document, a JSON object: the plain fields of the
	// context as [Context.Serialize] writes them, secrets redacted. It
	// replaces the stored one.
	State []byte
	// Events are the events after After, seqs After+1, After+2, ..., each
	// the JSON [Context.AppendEventJSON] writes, to be kept byte for byte.
	Events []json.RawMessage
}

// Stored is what [Store.Read] returns of a log.
type Stored struct {
	Info   LogInfo
	State  []byte            // the state document of the last save
	Events []json.RawMessage // the events after the seq asked for, in order
}

// Store keeps logs of events, each with the state of its context as of its
// last save; [Context.Save], [Load] and [Context.Refresh] work with any
// Store. A backend must be safe for concurrent use, honour ctx in every
// method (once it is done, return an error wrapping ctx.Err() and store
// nothing partial), and keep a batch whole or not at all, even across a
// crash. storetest.Run checks all of it.
type Store interface {
	// Append stores b if log b.Info.ID has head b.After and incarnation
	// b.Info.Incarnation, a compare-and-set on the head: it appends
	// b.Events, replaces the state and takes b.Info's head and update
	// time. A log the store does not hold has head 0: a batch after 0
	// creates it with b.Info's identity, its name and labels included
	// (later batches' are not read). A log whose head or incarnation is
	// not the expected one (one that exists when created included) is an
	// error wrapping [ErrConflict] naming the expected and stored head;
	// so is a log created with a name another log of the store holds,
	// which the store must refuse atomically, whoever else creates one at
	// the same time through any handle. A missing log after a head above
	// 0 wraps [ErrNotFound]; a name or labels [CheckName] refuses wrap
	// [ErrInvalidName]. On error nothing changes. Append keeps no slice or
	// map of b: once it returns, they are the caller's again.
	Append(ctx context.Context, b Batch) error
	// Read returns log id's info, state and events after seq after, each
	// as Append was given it. A missing log wraps [ErrNotFound]; data that
	// fails its checks wraps [ErrCorrupt], naming the log and the place.
	Read(ctx context.Context, id uuid.UUID, after int64) (Stored, error)
	// List yields the stored logs in ID order (UUID v7: creation order),
	// as opts selects; an error ends it.
	List(ctx context.Context, opts ListOptions) iter.Seq2[LogInfo, error]
	// Lookup returns the info of the log named name; none wraps
	// [ErrNotFound]. A log's name is free again once it is deleted.
	Lookup(ctx context.Context, name string) (LogInfo, error)
	// Delete removes log id and nothing else (its forks keep their events).
	// A missing log wraps [ErrNotFound].
	Delete(ctx context.Context, id uuid.UUID) error
}

// Watcher is the optional capability of a store that can follow a log as it
// grows.
type Watcher interface {
	// Watch yields the stored events of log id with seq > after, in order,
	// then every event saved later, with no gap and no duplicate, until ctx
	// is done; then it yields ctx.Err() once and ends.
	Watch(ctx context.Context, id uuid.UUID, after int64) iter.Seq2[Event, error]
}
