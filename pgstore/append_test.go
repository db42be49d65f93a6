package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// rawEvents returns n events with seqs after+1..after+n, as this package
// writes them: a turn_start, then a tool_call whose call's ID holds a NUL,
// and so on.
func rawEvents(after int64, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range n {
		seq := after + 1 + int64(i)
		if seq%2 == 0 {
			out[i] = json.RawMessage(fmt.Sprintf(`{"seq":%d,"type":"tool_call","created_at":"2026-11-30T12:00:00Z","call":{"id":"c%d\u0000","name":"f"}}`, seq, seq))
		} else {
			out[i] = json.RawMessage(fmt.Sprintf(`{"seq":%d,"type":"turn_start","created_at":"2026-11-30T12:00:00Z"}`, seq))
		}
	}
	return out
}

// firstBatch returns the creating batch of a log with n events.
func firstBatch(id, inc uuid.UUID, n int) nous.Batch {
	return nous.Batch{
		Info:  nous.LogInfo{ID: id, Head: int64(n), Incarnation: inc, UpdatedAt: time.Now(), CreatedAt: time.Now()},
		State: []byte(`{"version":2}`), Events: rawEvents(0, n),
	}
}

// nextBatch returns the batch after st with n events.
func nextBatch(st nous.Stored, n int) nous.Batch {
	info := st.Info
	after := info.Head
	info.Head += int64(n)
	info.UpdatedAt = time.Now()
	return nous.Batch{Info: info, After: after, State: []byte(`{"version":2}`), Events: rawEvents(after, n)}
}

// readAll reads log id whole.
func readAll(t testing.TB, s nous.Store, id uuid.UUID) nous.Stored {
	t.Helper()
	st, err := s.Read(bg, id, 0)
	must(t, err)
	return st
}

// Event bodies come back byte for byte: a NUL, keys in an order no writer
// of this package would choose, spacing, a number too large for a float,
// a tool call whose arguments are not an object.
func TestExactBytes(t *testing.T) {
	dsn := freshSchema(t)
	s := open(t, dsn)
	id := uuid.Must(uuid.NewV7())
	events := []json.RawMessage{
		json.RawMessage(`{"message":{"content":"a\u0000b","role":"user"},  "type":"message","seq":1,"created_at":"2026-11-30T12:00:00.123456789Z"}`),
		json.RawMessage(`{"seq":2,"type":"turn_start","created_at":"2026-11-30T12:00:01Z","data":{"z":1,"a":123456789012345678901234567890}}`),
		json.RawMessage(`{"call":{"name":"f","id":"x","arguments":"not an object"},"seq":3,"type":"tool_call","created_at":"2026-11-30T12:00:02Z"}`),
	}
	state := []byte(`{"version":2,  "deps":{"b":"\u0000","a":1.50}}`)
	b := nous.Batch{
		Info:  nous.LogInfo{ID: id, Head: 3, Incarnation: uuid.New(), UpdatedAt: time.Now()},
		State: state, Events: events,
	}
	must(t, s.Append(bg, b))
	st := readAll(t, s, id)
	if !bytes.Equal(st.State, state) || len(st.Events) != len(events) {
		t.Fatalf("read %s %q", st.State, st.Events)
	}
	for i := range events {
		if !bytes.Equal(st.Events[i], events[i]) {
			t.Errorf("event %d: read %s, stored %s", i+1, st.Events[i], events[i])
		}
	}
	var typ string
	var at time.Time
	must(t, connect(t, dsn).QueryRow(bg, `SELECT type, created_at FROM nous_events WHERE log_id = $1 AND seq = 1`, id).Scan(&typ, &at))
	if typ != "message" || !at.Equal(time.Date(2026, 11, 30, 12, 0, 0, 123456000, time.UTC)) {
		t.Errorf("columns type %q, created_at %v", typ, at)
	}
}

// Read returns the events after any seq: every one after a negative seq,
// none after the head or beyond.
func TestReadAfterAnySeq(t *testing.T) {
	s := open(t, freshSchema(t))
	id := uuid.Must(uuid.NewV7())
	must(t, s.Append(bg, firstBatch(id, uuid.New(), 4)))
	for _, tc := range []struct {
		after int64
		want  int
	}{{math.MinInt64, 4}, {math.MinInt32 - 1, 4}, {-1, 4}, {0, 4}, {3, 1}, {4, 0}, {5, 0}, {math.MaxInt64, 0}} {
		st, err := s.Read(bg, id, tc.after)
		if err != nil {
			t.Errorf("Read after %d: %v", tc.after, err)
			continue
		}
		if len(st.Events) != tc.want || st.Info.Head != 4 {
			t.Errorf("Read after %d: %d events, head %d; want %d, head 4", tc.after, len(st.Events), st.Info.Head, tc.want)
		}
		for i, e := range st.Events {
			if want := rawEvents(int64(4-tc.want), tc.want)[i]; !bytes.Equal(e, want) {
				t.Errorf("Read after %d: event %s, want %s", tc.after, e, want)
			}
		}
	}
}

// 10,000 and 100,000 events in one Append, and a state of 50 MB of NUL
// bytes, read back whole; the next batch appends to them.
func TestBigBatches(t *testing.T) {
	s := open(t, freshSchema(t))
	for _, n := range []int{10000, 100000} {
		id := uuid.Must(uuid.NewV7())
		b := firstBatch(id, uuid.New(), n)
		b.State = bytes.Repeat([]byte{0}, 50<<20)
		must(t, s.Append(bg, b))
		st := readAll(t, s, id)
		if len(st.Events) != n || !bytes.Equal(st.State, b.State) || !bytes.Equal(st.Events[n-1], b.Events[n-1]) {
			t.Fatalf("%d events of %d read back, state of %d bytes", len(st.Events), n, len(st.State))
		}
		st2, err := s.Read(bg, id, int64(n))
		must(t, err)
		must(t, s.Append(bg, nextBatch(st2, n)))
		if st := readAll(t, s, id); len(st.Events) != 2*n || st.Info.Head != int64(2*n) {
			t.Fatalf("after the second batch: %d events, head %d", len(st.Events), st.Info.Head)
		}
	}
}

// A cancelled Append wraps the context's error and stores all or nothing.
func TestCancelledAppendStoresAllOrNothing(t *testing.T) {
	s := open(t, freshSchema(t))
	for i := range 30 {
		id := uuid.Must(uuid.NewV7())
		must(t, s.Append(bg, firstBatch(id, uuid.New(), 1)))
		b := nextBatch(readAll(t, s, id), 20000)
		ctx, cancel := context.WithTimeout(bg, time.Duration(i)*time.Millisecond)
		err := s.Append(ctx, b)
		cancel()
		after := readAll(t, s, id)
		switch {
		case err == nil:
			if after.Info.Head != b.Info.Head {
				t.Fatalf("acknowledged but head %d", after.Info.Head)
			}
		case !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("round %d: %v does not wrap the deadline", i, err)
		}
		if int64(len(after.Events)) != after.Info.Head || (after.Info.Head != 1 && after.Info.Head != b.Info.Head) {
			t.Fatalf("partial: head %d, %d events", after.Info.Head, len(after.Events))
		}
	}
}

// Bodies round-trip under the other query modes a caller's pool may use.
func TestBodiesRoundTripInEveryQueryMode(t *testing.T) {
	for _, mode := range []string{"simple_protocol", "exec", "describe_exec", "cache_describe"} {
		t.Run(mode, func(t *testing.T) {
			s := open(t, freshSchema(t)+"&default_query_exec_mode="+mode)
			id := uuid.Must(uuid.NewV7())
			b := firstBatch(id, uuid.New(), 2)
			b.Events[1] = json.RawMessage("{\"seq\":2,\"type\":\"tool_call\",\"created_at\":\"2026-11-30T12:00:00Z\",\"call\":{\"id\":\"x\\u0000 ,{}\\\"'\",\"name\":\"f\"}}")
			b.State = []byte("{\"version\":2,\"x\":\"\x00\\\\\"}")
			must(t, s.Append(bg, b))
			st := readAll(t, s, id)
			if !bytes.Equal(st.State, b.State) || !bytes.Equal(st.Events[1], b.Events[1]) {
				t.Fatalf("read back %q %q", st.State, st.Events[1])
			}
			must(t, s.Append(bg, nextBatch(st, 1)))
			n := 0
			for _, err := range s.List(bg, nous.ListOptions{}) {
				must(t, err)
				n++
			}
			if n != 1 {
				t.Fatalf("List yielded %d logs, want 1", n)
			}
			must(t, s.Delete(bg, id))
		})
	}
}

// A batch after seq 0 creates the log, or appends to a log of head 0 and
// its incarnation, as any batch appends to a log at the head it expects;
// to a log that moved on, or of another incarnation, it is an
// ErrConflict that names both heads, and stores nothing. Only the batch
// that creates the log names it.
func TestBatchAfterZero(t *testing.T) {
	s := open(t, freshSchema(t))
	id, inc := uuid.Must(uuid.NewV7()), uuid.New()
	empty := firstBatch(id, inc, 0)
	empty.Info.Name = "after zero"
	must(t, s.Append(bg, empty))
	other := firstBatch(id, uuid.New(), 2)
	if err := s.Append(bg, other); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a batch after 0 of another incarnation: %v, want ErrConflict", err)
	}
	b := firstBatch(id, inc, 2)
	b.Info.Name = "renamed"
	must(t, s.Append(bg, b))
	st := readAll(t, s, id)
	if st.Info.Head != 2 || len(st.Events) != 2 || st.Info.Name != "after zero" {
		t.Fatalf("after a batch after 0 onto a log of head 0: head %d, %d events, name %q", st.Info.Head, len(st.Events), st.Info.Name)
	}
	again := firstBatch(id, inc, 1)
	err := s.Append(bg, again)
	if !errors.Is(err, nous.ErrConflict) || !strings.Contains(err.Error(), "expected head 0") || !strings.Contains(err.Error(), "stored head 2") {
		t.Fatalf("a batch after 0 onto a log of head 2: %v, want ErrConflict naming both heads", err)
	}
	stale := nextBatch(st, 1)
	stale.Info.Incarnation = uuid.New()
	if err := s.Append(bg, stale); !errors.Is(err, nous.ErrConflict) {
		t.Fatalf("a batch of another incarnation at the stored head: %v, want ErrConflict", err)
	}
	if now := readAll(t, s, id); now.Info.Head != 2 || len(now.Events) != 2 {
		t.Fatalf("refused batches changed the log: head %d, %d events", now.Info.Head, len(now.Events))
	}
}
