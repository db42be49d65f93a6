// Command postgres shows one session served by several replicas through
// the PostgreSQL store: replicas A and B, each with its own connection
// pool as separate processes would have, take alternate turns of one
// conversation, each bringing its cached context up to date with Refresh
// before its turn; a third follows the run with Watch as it is saved.
//
//	go run . -dsn postgres://user@localhost:5432/db
//
// or with NOUS_POSTGRES_DSN set. The session is deleted at the end unless
// -keep is given.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/pgstore"
)

// replica is one process serving turns: its store and its cached context.
type replica struct {
	name  string
	store *pgstore.Store
	c     *nous.Context
}

func main() {
	dsn := flag.String("dsn", os.Getenv("NOUS_POSTGRES_DSN"), "the PostgreSQL DSN (default $NOUS_POSTGRES_DSN)")
	keep := flag.Bool("keep", false, "keep the session in the database")
	flag.Parse()
	if *dsn == "" {
		fmt.Fprintln(os.Stderr, "postgres: give a DSN with -dsn or NOUS_POSTGRES_DSN, e.g. postgres://postgres@localhost:5432/postgres")
		os.Exit(2)
	}
	ctx := context.Background()
	open := func() *pgstore.Store {
		s, err := pgstore.Open(ctx, *dsn)
		check(err)
		return s
	}
	a, b, w := &replica{name: "A", store: open()}, &replica{name: "B", store: open()}, open()
	defer a.store.Close()
	defer b.store.Close()
	defer w.Close()

	// Replica A starts the session.
	a.c = nous.NewContext(nous.WithSystemPrompt("You are a concise weather assistant."))
	check(a.c.Save(ctx, a.store))
	id := a.c.Log().ID()
	fmt.Println("session started by replica A")
	if !*keep {
		defer func() { check(a.store.Delete(ctx, id)) }()
	}

	// The watcher follows the session as it grows, from any replica.
	watchCtx, stop := context.WithCancel(ctx)
	seen := make(chan nous.Event)
	go func() {
		defer close(seen)
		for e, err := range w.Watch(watchCtx, id, 0) {
			if err != nil {
				return
			}
			seen <- e
		}
	}()

	questions := []string{"Weather in Paris?", "And in Rome?", "Which is warmer?", "Thanks!"}
	head := int64(0)
	for i, q := range questions {
		r := []*replica{a, b}[i%2]
		serve(ctx, r, id, q)
		fmt.Printf("replica %s served %q: saved up to seq %d\n", r.name, q, r.c.Log().Len())
		for head < int64(r.c.Log().Len()) {
			e := <-seen
			head = e.Seq
			if e.Message != nil {
				fmt.Printf("  watcher: seq %2d %-9s %s\n", e.Seq, e.Message.Role, describe(e.Message))
			}
		}
	}
	stop()
	for range seen {
	}

	// Two replicas that both think they are at the head: one wins, the
	// other conflicts and redoes its turn on the stored log.
	check(a.c.Refresh(ctx, a.store))
	check(b.c.Refresh(ctx, b.store))
	check(a.c.AddMessage(nous.UserMessage("from A")))
	check(b.c.AddMessage(nous.UserMessage("from B")))
	check(a.c.Save(ctx, a.store))
	err := b.c.Save(ctx, b.store)
	fmt.Printf("replica B saved too: conflict=%v\n", errors.Is(err, nous.ErrConflict))
	b.c, err = nous.Load(ctx, b.store, id)
	check(err)
	check(b.c.AddMessage(nous.UserMessage("from B")))
	check(b.c.Save(ctx, b.store))
	final, err := nous.Load(ctx, w, id)
	check(err)
	fmt.Printf("the session holds %d messages, %d events; the last two: %q, %q\n",
		final.Len(), final.Log().Len(), final.Messages()[final.Len()-2].Content, final.Messages()[final.Len()-1].Content)
}

// serve runs one turn of session id on replica r: it brings its context up
// to date (loading it the first time), adds the turn and saves; when
// another replica saved first, it redoes the turn on the stored log.
func serve(ctx context.Context, r *replica, id uuid.UUID, question string) {
	for {
		var err error
		if r.c == nil {
			r.c, err = nous.Load(ctx, r.store, id)
		} else {
			err = r.c.Refresh(ctx, r.store)
		}
		check(err)
		answer(r.c, question)
		err = r.c.Save(ctx, r.store)
		if !errors.Is(err, nous.ErrConflict) {
			check(err)
			return
		}
		r.c = nil // another replica moved the session on: load it and redo the turn
	}
}

// answer is a fake model's turn: a tool call, its result, an answer.
func answer(c *nous.Context, question string) {
	check(c.AddMessage(nous.UserMessage(question)))
	call := nous.ToolCall{ID: fmt.Sprintf("call_%d", c.Log().Len()), Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	check(c.AddMessages(
		nous.AssistantMessage("", call),
		nous.ToolMessage(call.ID, call.Name, `{"temp_c":18}`),
		nous.AssistantMessage("18°C and sunny."),
	))
	c.Iteration++
}

func describe(m *nous.Message) string {
	if len(m.ToolCalls) > 0 {
		return "calls " + m.ToolCalls[0].Name
	}
	return m.Content
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
