package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
	"github.com/nous-go/nous/storetest"
)

func TestConformance(t *testing.T) {
	serverDSN(t)
	dsns := map[nous.Store]string{}
	storetest.Run(t, func(t *testing.T) nous.Store {
		dsn := freshSchema(t)
		s := open(t, dsn)
		dsns[s] = dsn
		return s
	}, storetest.WithReopen(func(t *testing.T, s nous.Store) nous.Store {
		s.(*pgstore.Store).Close()
		again := open(t, dsns[s])
		dsns[again] = dsns[s]
		return again
	}), storetest.WithSecondHandle(func(t *testing.T, s nous.Store) nous.Store {
		// Another Store, with a pool of its own, on s's schema: as another
		// replica would be.
		return open(t, dsns[s])
	}))
}

// same fails unless a and b serialize to the same bytes.
func same(t testing.TB, a, b *nous.Context) {
	t.Helper()
	x, err := a.Serialize()
	must(t, err)
	y, err := b.Serialize()
	must(t, err)
	if !bytes.Equal(x, y) {
		t.Fatalf("contexts differ:\n%s\n%s", x, y)
	}
}

// turn adds one turn to c: a user message, an assistant message with a
// tool call, which c records, a state change and the tool's result.
func turn(t testing.TB, c *nous.Context, i int) {
	t.Helper()
	call := nous.ToolCall{ID: fmt.Sprint("call_", i), Name: "lookup", Arguments: json.RawMessage(`{"q":1}`)}
	must(t, c.AddMessages(nous.UserMessage(fmt.Sprint("question ", i)), nous.AssistantMessage("", call)))
	c.AddToolCall(call)
	c.Iteration++
	must(t, c.AddMessage(nous.ToolMessage(call.ID, call.Name, fmt.Sprint("result ", i))))
}

// counter counts the statements a pool sends, but for the notifications
// a Store sends after its saves commit, in transactions of their own.
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if data.SQL != pgstore.NotifyQuery {
		c.n.Add(1)
	}
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A save, a load, a refresh, a lookup by name and a page of logs listed by
// labels are one statement each: one round trip.
func TestOneStatementEach(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(freshSchema(t))
	must(t, err)
	var n counter
	cfg.ConnConfig.Tracer = &n
	pool, err := pgxpool.NewWithConfig(bg, cfg)
	must(t, err)
	defer pool.Close()
	s, err := pgstore.New(bg, pool)
	must(t, err)
	defer s.Close()
	c := nous.NewContext(nous.WithLogger(quiet), nous.WithLogName("counted"), nous.WithLogLabels(map[string]string{"app": "x"}))
	turn(t, c, 0)
	count := func(what string, op func() error) {
		t.Helper()
		before := n.n.Load()
		must(t, op())
		if got := n.n.Load() - before; got != 1 {
			t.Errorf("%s sent %d statements, want 1", what, got)
		}
	}
	count("the first save", func() error { return c.Save(bg, s) })
	turn(t, c, 1)
	count("a save", func() error { return c.Save(bg, s) })
	var loaded *nous.Context
	count("a load", func() (err error) { loaded, err = nous.Load(bg, s, c.Log().ID()); return err })
	turn(t, c, 2)
	count("a save", func() error { return c.Save(bg, s) })
	count("a refresh", func() error { return loaded.Refresh(bg, s) })
	same(t, c, loaded)
	count("a lookup", func() error { _, err := s.Lookup(bg, "counted"); return err })
	count("a page listed by labels", func() error {
		for _, err := range s.List(bg, nous.ListOptions{Labels: map[string]string{"app": "x"}}) {
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// Recorded tool calls are rows of nous_events like any other event: a save
// with n calls recorded since the last one (by AddToolCall or appended
// directly) inserts n tool_call rows and the batch event that ends every
// batch, nothing else; another replica's
// Refresh and Load give them back, and a Watch yields each with its call.
func TestToolCallsAreEventRows(t *testing.T) {
	dsn := freshSchema(t)
	s, other := open(t, dsn), open(t, dsn)
	conn := connect(t, dsn)
	c := nous.NewContext(nous.WithLogger(quiet))
	must(t, c.AddMessage(nous.UserMessage("go")))
	must(t, c.Save(bg, s))
	id := c.Log().ID()
	follower, err := nous.Load(bg, other, id)
	must(t, err)
	for round, n := range []int{1, 4, 2} {
		head := c.Log().Len()
		for j := range n {
			call := nous.ToolCall{ID: fmt.Sprintf("call_%d_%d", round, j), Name: "f", Arguments: json.RawMessage(fmt.Sprintf(`{"j":%d}`, j)),
				Metadata: map[string]any{"signature": "s"}}
			if j%2 == 0 {
				c.AddToolCall(call)
			} else {
				c.ToolCalls = append(c.ToolCalls, call)
			}
		}
		must(t, c.Save(bg, s))
		var calls, batches, rows, head2 int
		must(t, conn.QueryRow(bg, `SELECT count(*) FILTER (WHERE e.type = 'tool_call'), count(*) FILTER (WHERE e.type = 'batch'), count(e.seq), max(l.head)
			FROM nous_logs l LEFT JOIN nous_events e ON e.log_id = l.id AND e.seq > $2 WHERE l.id = $1`, id, head).Scan(&calls, &batches, &rows, &head2))
		if calls != n || batches != 1 || rows != n+1 || head2 != head+n+1 {
			t.Fatalf("round %d: a save of %d new calls stored %d rows, %d of them tool_call and %d batch, head %d after %d",
				round, n, rows, calls, batches, head2, head)
		}
		must(t, follower.Refresh(bg, other))
		same(t, c, follower)
	}
	loaded, err := nous.Load(bg, other, id)
	must(t, err)
	same(t, c, loaded)

	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	var watched []nous.ToolCall
	for e, err := range other.Watch(ctx, id, 0) {
		must(t, err)
		if e.Call != nil {
			watched = append(watched, *e.Call)
		}
		if e.Seq == int64(c.Log().Len()) {
			break
		}
	}
	if !slices.EqualFunc(watched, c.ToolCalls, func(a, b nous.ToolCall) bool { return a.ID == b.ID && bytes.Equal(a.Arguments, b.Arguments) }) {
		t.Fatalf("watched calls %v, recorded %v", watched, c.ToolCalls)
	}
}
