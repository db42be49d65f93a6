package nous_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// batchEvents returns the keys of the batch events of c's log, in order.
func batchEvents(t *testing.T, c *nous.Context) []string {
	t.Helper()
	var keys []string
	for e := range c.Log().All() {
		if e.Type == nous.EventBatch {
			list, ok := e.Data[nous.DataKeys].([]any)
			if !ok || len(list) != 1 {
				t.Fatalf("batch event %d: %v", e.Seq, e.Data)
			}
			keys = append(keys, list[0].(string))
		}
	}
	return keys
}

// Every save that stores something ends its batch with a batch event of
// its key, the caller's for one batch, a random one otherwise; a save
// with nothing new adds none. The keys are known by HasBatch from the log
// alone, after a Load too.
func TestEveryBatchEndsWithItsKey(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.SetBatchKey("job-1")
	mustDo(t, c.Save(ctx, s))
	mustDo(t, c.Save(ctx, s)) // nothing new
	c.IncrementIteration()    // the state alone
	mustDo(t, c.Save(ctx, s))
	keys := batchEvents(t, c)
	if len(keys) != 2 || keys[0] != "job-1" || keys[1] == "job-1" || len(keys[1]) != 22 {
		t.Fatalf("batch keys %q, want job-1 then a random one", keys)
	}
	if last, _ := c.Log().Event(int64(c.Log().Len())); last.Type != nous.EventBatch {
		t.Fatalf("the log ends with %s, want a batch event", last.Type)
	}
	loaded := mustLoad(t, s, c.Log().ID())
	for _, k := range keys {
		if !c.HasBatch(k) || !loaded.HasBatch(k) {
			t.Fatalf("key %q unknown to the saver or the loader", k)
		}
	}
	if loaded.HasBatch("job-2") || loaded.HasBatch("") {
		t.Fatal("a key no batch has is known")
	}
	if err := c.LogEvent(nous.EventBatch, map[string]any{nous.DataKeys: []any{"mine"}}); !errors.Is(err, nous.ErrUnknownEventType) {
		t.Fatalf("LogEvent of a batch event: %v, want ErrUnknownEventType", err)
	}
}

// A save refused for sure (another writer saved first) takes back the
// events it appended, the deps changed directly and the batch event, and
// the Observer never sees them: the context is as it was, and its next
// save records the change once.
func TestRefusedSaveTakesItsEventsBack(t *testing.T) {
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))
	other := mustLoad(t, s, c.Log().ID())
	mustDo(t, other.AddMessage(nous.UserMessage("other")))
	mustDo(t, other.Save(ctx, s))

	var seen []nous.EventType
	c.Observer = func(e nous.Event) { seen = append(seen, e.Type) }
	c.Deps["user"] = "ada"
	mustDo(t, c.AddMessage(nous.UserMessage("two")))
	before := documentOf(t, c)
	for range 3 {
		if err := c.Save(ctx, s); !errors.Is(err, nous.ErrConflict) {
			t.Fatalf("save after another writer: %v, want ErrConflict", err)
		}
		if after := documentOf(t, c); after != before {
			t.Fatalf("a refused save changed the context:\n%s\n%s", before, after)
		}
	}
	if fmt.Sprint(seen) != "[user_message]" {
		t.Fatalf("the Observer saw %v, want only the message", seen)
	}
	redo := mustLoad(t, s, c.Log().ID())
	redo.Observer = c.Observer
	redo.Deps["user"] = "ada"
	mustDo(t, redo.AddMessage(nous.UserMessage("two")))
	mustDo(t, redo.Save(ctx, s))
	if fmt.Sprint(seen) != "[user_message user_message deps_update batch]" {
		t.Fatalf("the Observer saw %v, want the redone message, then the save's deps_update and batch", seen)
	}
}

// A save whose reply was lost keeps its batch event (the store may hold
// it): the Observer sees it once, and the retry sends the same batch,
// which is found landed, so the log gains nothing more.
func TestLostReplyKeepsItsBatch(t *testing.T) {
	ctx := context.Background()
	s := &lostReplyStore{Store: storetest.NewMemory()}
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	mustDo(t, c.Save(ctx, s))
	batches := 0
	c.Observer = func(e nous.Event) {
		if e.Type == nous.EventBatch {
			batches++
		}
	}
	mustDo(t, c.AddMessage(nous.UserMessage("two")))
	s.armed = true
	if err := c.Save(ctx, s); !errors.Is(err, errLostReply) {
		t.Fatalf("save with its reply lost: %v", err)
	}
	n := c.Log().Len()
	for range 2 {
		mustDo(t, c.Save(ctx, s))
	}
	if c.Log().Len() != n || batches != 1 {
		t.Fatalf("the retry appended %d events and the Observer saw %d batch events, want 0 and 1", c.Log().Len()-n, batches)
	}
	if got := mustLoad(t, s, c.Log().ID()); got.Log().Len() != n || documentOf(t, got) != documentOf(t, c) {
		t.Fatalf("stored %d events, want %d, the context's", got.Log().Len(), n)
	}
}

// unsentStore fails an Append, once armed, before the store has it.
type unsentStore struct {
	nous.Store
	armed bool
}

func (s *unsentStore) Append(ctx context.Context, b nous.Batch) error {
	if s.armed {
		s.armed = false
		return errLostReply
	}
	return s.Store.Append(ctx, b)
}

// The retry of a save that never reached the store sends the same batch,
// its batch event included, not one batch event more.
func TestRetryOfAnUnsentSave(t *testing.T) {
	ctx := context.Background()
	s := &unsentStore{Store: storetest.NewMemory()}
	c := nous.NewContext(quietOption)
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	s.armed = true
	if err := c.Save(ctx, s); !errors.Is(err, errLostReply) {
		t.Fatalf("a save that never reached the store: %v", err)
	}
	mustDo(t, c.Save(ctx, s))
	c.SetBatchKey("job")
	mustDo(t, c.AddMessage(nous.UserMessage("two")))
	s.armed = true
	if err := c.Save(ctx, s); !errors.Is(err, errLostReply) {
		t.Fatalf("a save that never reached the store: %v", err)
	}
	mustDo(t, c.Save(ctx, s))
	if keys := batchEvents(t, mustLoad(t, s, c.Log().ID())); len(keys) != 2 || keys[1] != "job" {
		t.Fatalf("stored batch keys %q, want one per batch, the second job", keys)
	}
}

// A batch event is Save's: a document whose batch event names no valid
// key does not load, and a redaction rule that names "keys" keeps them.
func TestBatchEventChecked(t *testing.T) {
	for name, data := range map[string]string{
		"no keys":       `{}`,
		"empty list":    `{"keys":[]}`,
		"an empty key":  `{"keys":[""]}`,
		"a number":      `{"keys":[1]}`,
		"a key too big": `{"keys":["` + strings.Repeat("k", nous.MaxKeyBytes+1) + `"]}`,
		"not a list":    `{"keys":"k"}`,
	} {
		doc := `{"version":2,"messages":[],"log":{"id":"01a251c5-926b-7d7c-b25b-a89fe67b1295","events":[` +
			`{"seq":1,"type":"batch","data":` + data + `,"created_at":"2026-12-07T12:00:00Z"}]}}`
		if _, err := nous.Deserialize([]byte(doc)); !errors.Is(err, nous.ErrInvalidLog) {
			t.Errorf("%s: %v, want ErrInvalidLog", name, err)
		}
	}
	ctx := context.Background()
	s := storetest.NewMemory()
	c := nous.NewContext(quietOption)
	c.Redact = func(key string) bool { return key == "keys" || nous.IsSecretKey(key) }
	mustDo(t, c.AddMessage(nous.UserMessage("one")))
	c.SetBatchKey("job")
	mustDo(t, c.Save(ctx, s))
	if !mustLoad(t, s, c.Log().ID()).HasBatch("job") {
		t.Fatal("a rule that names keys dropped the batch's")
	}
}
