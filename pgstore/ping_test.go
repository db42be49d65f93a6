package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// A save whose connection sat idle for longer than pgx's threshold for a
// ping (a second), as one after a model's call does, is one round trip:
// on the pool Open makes, and on a caller's pool whose config has
// pgstore.ShouldPing. On a pool of pgx's default config it is two, a ping
// first: the proxy sees pings.
func TestSaveAfterIdleIsOneRoundTrip(t *testing.T) {
	p, dsn := newProxy(t, freshSchema(t))
	dsn += "&pool_max_conns=1" // the connection that sits idle is the one the save takes
	withConfig := func(shouldPing bool) func() *pgstore.Store {
		return func() *pgstore.Store {
			cfg, err := pgxpool.ParseConfig(dsn)
			must(t, err)
			if shouldPing {
				cfg.ShouldPing = pgstore.ShouldPing
			}
			pool, err := pgxpool.NewWithConfig(bg, cfg)
			must(t, err)
			t.Cleanup(pool.Close)
			s, err := pgstore.New(bg, pool)
			must(t, err)
			return s
		}
	}
	for _, tc := range []struct {
		name  string
		store func() *pgstore.Store
		trips int
	}{
		{"Open", func() *pgstore.Store { s, err := pgstore.Open(bg, dsn); must(t, err); return s }, 1},
		{"New with ShouldPing", withConfig(true), 1},
		{"New with pgx's default", withConfig(false), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.store()
			c := nous.NewContext(nous.WithLogger(quiet))
			for i := range 3 { // the connection is made, the statements prepared on it
				turn(t, c, i)
				must(t, c.Save(bg, s))
			}
			time.Sleep(1500 * time.Millisecond)
			n := p.count()
			turn(t, c, 3)
			must(t, c.Save(bg, s))
			s.Close() // and the notification is sent
			var trips []string
			saves := 0
			for _, sql := range p.since(n) {
				switch sql {
				case pgstore.NotifyQuery: // after the save committed, in a transaction of its own
				case pgstore.AppendNextQuery:
					saves++
					fallthrough
				default:
					trips = append(trips, sql)
				}
			}
			if saves != 1 || len(trips) != tc.trips {
				t.Fatalf("a save after a pause made %d round trips (%d of the save's statement), want %d: %q", len(trips), saves, tc.trips, trips)
			}
		})
	}
}

// Connections the server ended while they sat in the pool (as a restart,
// pg_terminate_backend or idle_session_timeout ends them) are pinged,
// fail, and are replaced before saves use them: no save fails for them,
// though pgx would not have pinged a connection idle for less than a
// second.
func TestSavesAfterTheServerEndedIdleConnections(t *testing.T) {
	dsn := freshSchema(t) + "&application_name=ended_idle&pool_max_conns=4"
	s := open(t, dsn)
	contexts := make([]*nous.Context, 4)
	var wg sync.WaitGroup
	for i := range contexts { // four connections at work at once, then idle
		contexts[i] = nous.NewContext(nous.WithLogger(quiet))
		wg.Go(func() {
			for j := range 5 {
				turn(t, contexts[i], j)
				if err := contexts[i].Save(bg, s); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	conn := connect(t, serverDSN(t))
	var ended int
	must(t, conn.QueryRow(bg, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'ended_idle'`).Scan(&ended))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left int
		must(t, conn.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ended_idle'`).Scan(&left))
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the pool's backends still there", left)
		}
	}
	if ended < 2 {
		t.Fatalf("the pool had %d connections, want several", ended)
	}
	for i, c := range contexts {
		turn(t, c, 5)
		if err := c.Save(bg, s); err != nil {
			t.Fatalf("save %d after the server ended %d idle connections: %v", i, ended, err)
		}
		loaded, err := nous.Load(bg, s, c.Log().ID())
		must(t, err)
		same(t, c, loaded)
	}
}

// A save whose connection the network reset while it sat idle, on a pool
// that pings nothing, fails at its first write, before anything was sent:
// it is sent again, on another connection, and stored once.
func TestSaveOnAResetConnectionIsSentAgain(t *testing.T) {
	p, dsn := newProxy(t, freshSchema(t))
	cfg, err := pgxpool.ParseConfig(dsn)
	must(t, err)
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(bg, cfg)
	must(t, err)
	defer pool.Close()
	s, err := pgstore.New(bg, pool)
	must(t, err)
	defer s.Close()
	c := nous.NewContext(nous.WithLogger(quiet))
	turn(t, c, 0)
	must(t, c.Save(bg, s))
	time.Sleep(100 * time.Millisecond) // the notification is sent
	p.reset()
	time.Sleep(100 * time.Millisecond) // the reset arrives
	turn(t, c, 1)
	if err := c.Save(bg, s); err != nil {
		t.Fatalf("a save on a connection reset while idle: %v", err)
	}
	loaded, err := nous.Load(bg, s, c.Log().ID())
	must(t, err)
	same(t, c, loaded)
}
