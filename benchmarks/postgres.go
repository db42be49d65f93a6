package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/adk/v2/session/database"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/nous-go/nous"
	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/pgstore"
)

// How a nous conversation meets its store each turn.
const (
	// Resident: the runtime keeps the context in memory and saves each
	// turn.
	Resident = "resident"
	// Cached: two replicas take alternate turns, each bringing its cached
	// context up to date with Refresh (only the new events) first.
	Cached = "cached"
	// Cold: each turn loads the session from scratch, as a replica with
	// nothing cached must, and saves it.
	Cold = "cold"
)

// StoredNous is the conversation of [Nous] kept in a store, saved after
// every turn, in one of the modes Resident, Cached and Cold.
type StoredNous struct {
	mode   string
	stores [2]nous.Store // the replicas' stores: two handles on one database for Cached
	cs     [2]*nous.Context
	id     uuid.UUID
	walk   Nous
}

// NewStoredNous starts a conversation in stores[0] (and stores[1], for
// Cached, a second handle on the same data).
func NewStoredNous(ctx context.Context, mode string, stores ...nous.Store) (*StoredNous, error) {
	s := &StoredNous{mode: mode, stores: [2]nous.Store{stores[0], stores[len(stores)-1]}}
	c := NewNous(false).c
	if err := c.Save(ctx, s.stores[0]); err != nil {
		return nil, err
	}
	s.id, s.cs[0] = c.Log().ID(), c
	if mode == Cached {
		var err error
		if s.cs[1], err = nous.Load(ctx, s.stores[1], s.id); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Turn implements [Conversation]: the turn of [Nous], then a save.
func (s *StoredNous) Turn(i int) (int, error) {
	ctx := context.Background()
	r := 0
	switch s.mode {
	case Cached:
		r = i % 2
		if err := s.cs[r].Refresh(ctx, s.stores[r]); err != nil {
			return 0, err
		}
	case Cold:
		c, err := nous.Load(ctx, s.stores[0], s.id)
		if err != nil {
			return 0, err
		}
		s.cs[0] = c
	}
	s.walk.c = s.cs[r]
	n, err := s.walk.Turn(i)
	if err != nil {
		return 0, err
	}
	return n, s.cs[r].Save(ctx, s.stores[r])
}

// Summary implements [Conversation]: of the session as stored.
func (s *StoredNous) Summary() (int, int, string, error) {
	c, err := nous.Load(context.Background(), s.stores[0], s.id)
	if err != nil {
		return 0, 0, "", err
	}
	return (&Nous{c: c}).Summary()
}

// SaveTurn adds turn i of the conversation to c, as [Nous.Turn] does but
// for the walk of the history, and saves c to s: the turn's three events
// and the state, one statement for pgstore.
func SaveTurn(ctx context.Context, c *nous.Context, s nous.Store, i int) error {
	t := turn(i)
	if err := c.AddMessage(nous.UserMessage(t.question)); err != nil {
		return err
	}
	if err := answer(c, t); err != nil {
		return err
	}
	return c.Save(ctx, s)
}

// NewADKDatabase returns an empty conversation on ADK-Go's database session
// service (gorm, with its PostgreSQL driver) on the database dsn names, its
// tables created by ADK's AutoMigrate. The runner's use of it is that of
// [ADK]: a Get of the whole session at the start of every turn, an
// AppendEvent for each event.
func NewADKDatabase(dsn string) (*ADK, error) {
	svc, err := database.NewSessionService(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	if err := database.AutoMigrate(svc); err != nil {
		return nil, err
	}
	return newADK(svc, true, uuid.NewString())
}

// FloorPG is the least a cold turn costs in PostgreSQL through pgx: one
// SELECT of the session's event bodies, each decoded with Event's JSON
// into the request, then the turn's three events and the new state
// inserted in one transaction, in one round trip. It keeps no context, no
// fold, no checks.
type FloorPG struct {
	pool *pgxpool.Pool
	id   uuid.UUID
	seq  int64
	req  []nous.Message
	deps map[string]any
	// Notify makes each write also call pg_notify in its transaction, as a
	// save that notified its watchers at commit would: every such commit
	// in the cluster then holds PostgreSQL's lock of the notification
	// queue until its WAL is flushed, one after another.
	Notify bool
}

// FloorSchema creates FloorPG's tables.
const FloorSchema = `
CREATE TABLE IF NOT EXISTS floor_sessions (id uuid PRIMARY KEY, head bigint NOT NULL, state bytea NOT NULL);
CREATE TABLE IF NOT EXISTS floor_events (session uuid NOT NULL, seq bigint NOT NULL, body bytea NOT NULL, PRIMARY KEY (session, seq));
`

// NewFloorPG starts an empty floor conversation in pool's database.
func NewFloorPG(ctx context.Context, pool *pgxpool.Pool) (*FloorPG, error) {
	f := &FloorPG{pool: pool, id: uuid.New(), deps: map[string]any{}}
	if _, err := pool.Exec(ctx, FloorSchema); err != nil {
		return nil, err
	}
	_, err := pool.Exec(ctx, `INSERT INTO floor_sessions (id, head, state) VALUES ($1, 0, '{}')`, f.id)
	return f, err
}

// ReadEvents is the floor of a load: one SELECT of a log's event bodies,
// each decoded with Event's JSON.
func ReadEvents(ctx context.Context, pool *pgxpool.Pool, sql string, id uuid.UUID) ([]nous.Event, error) {
	rows, err := pool.Query(ctx, sql, id)
	if err != nil {
		return nil, err
	}
	var events []nous.Event
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&body}, func() error {
		events = append(events, nous.Event{})
		return json.Unmarshal(body, &events[len(events)-1])
	})
	return events, err
}

// Turn implements [Conversation].
func (f *FloorPG) Turn(i int) (int, error) {
	ctx := context.Background()
	events, err := ReadEvents(ctx, f.pool, `SELECT body FROM floor_events WHERE session = $1 ORDER BY seq`, f.id)
	if err != nil {
		return 0, err
	}
	req := f.req[:0]
	for _, e := range events {
		req = append(req, *e.Message)
	}
	req = append(req, nous.UserMessage(turn(i).question))
	f.req = req
	return len(req), f.write(ctx, i)
}

// write stores turn i: its three events and the new state, inserted in one
// transaction, in one round trip.
func (f *FloorPG) write(ctx context.Context, i int) error {
	t := turn(i)
	cities, _ := f.deps["cities"].([]any)
	f.deps["last_city"], f.deps["cities"] = t.city, append(cities, t.city)
	msgs := []nous.Message{nous.UserMessage(t.question), nous.AssistantMessage("", nous.ToolCall{ID: t.callID, Name: toolName, Arguments: t.args}),
		nous.ToolMessage(t.callID, toolName, t.result)}
	types := []nous.EventType{nous.EventUserMessage, nous.EventAssistantMessage, nous.EventToolResult}
	bodies := make([][]byte, len(msgs))
	for j := range msgs {
		e := nous.Event{Seq: f.seq + 1 + int64(j), Type: types[j], Message: &msgs[j], CreatedAt: time.Now().UTC()}
		var err error
		if bodies[j], err = json.Marshal(e); err != nil {
			return err
		}
	}
	state, err := json.Marshal(f.deps)
	if err != nil {
		return err
	}
	var b pgx.Batch
	b.Queue(`BEGIN`)
	b.Queue(`INSERT INTO floor_events (session, seq, body) SELECT $1, $2::bigint + n, body FROM unnest($3::bytea[]) WITH ORDINALITY AS x(body, n)`,
		f.id, f.seq, bodies)
	b.Queue(`UPDATE floor_sessions SET head = $2, state = $3 WHERE id = $1`, f.id, f.seq+int64(len(msgs)), state)
	if f.Notify {
		b.Queue(`SELECT pg_notify('floor_sessions', $1::text)`, f.id.String())
	}
	b.Queue(`COMMIT`)
	if err := f.pool.SendBatch(ctx, &b).Close(); err != nil {
		return err
	}
	f.seq += int64(len(msgs))
	return nil
}

// Summary implements [Conversation].
func (f *FloorPG) Summary() (int, int, string, error) {
	events, err := ReadEvents(context.Background(), f.pool, `SELECT body FROM floor_events WHERE session = $1 ORDER BY seq`, f.id)
	cities, _ := f.deps["cities"].([]any)
	last, _ := f.deps["last_city"].(string)
	return len(events), len(cities), last, err
}

// OpenPgstore opens n handles on the pgstore of dsn.
func OpenPgstore(ctx context.Context, dsn string, n int) ([]*pgstore.Store, error) {
	var out []*pgstore.Store
	for range n {
		s, err := pgstore.Open(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("pgstore %s: %w", strconv.Itoa(len(out)), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// NewADKOnNous returns an empty conversation on nousadk's session service
// over a pgstore on dsn. The runner's use of it is that of [ADK]: a Get of
// the session at the start of every turn (which, for a session the
// service holds, reads only what others appended since), an AppendEvent
// for each event.
func NewADKOnNous(ctx context.Context, dsn string) (*ADK, *pgstore.Store, error) {
	s, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	a, err := newADK(nousadk.NewSessionService(s), true, uuid.NewString())
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return a, s, nil
}
