package nous_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// What a store never holds (a credential, a handle) a runtime supplies
// once per process: Load gives the session without it, one MergeDeps puts
// it back, and from then on Refresh keeps it, taking only what another
// writer changed.
func ExampleLoad_runtimeDeps() {
	ctx, store := context.Background(), storetest.NewMemory()
	quiet := nous.WithLogger(slog.New(slog.DiscardHandler))
	runtime := map[string]any{"api_key": "sk-from-the-environment"}

	c := nous.NewContext(quiet, nous.WithDeps(map[string]any{"user": "ada"}))
	c.MergeDeps(runtime)
	_ = c.AddMessage(nous.UserMessage("hi"))
	_ = c.Save(ctx, store) // the api_key is not stored

	// A new process: load the session, put back what is never stored.
	d, _ := nous.Load(ctx, store, c.Log().ID())
	fmt.Println("loaded:", d.Deps["user"], d.Deps["api_key"])
	d.MergeDeps(runtime)

	// Another replica saves a turn; the refresh keeps the credential.
	c.Deps["user"] = "grace"
	_ = c.AddMessage(nous.AssistantMessage("hello"))
	_ = c.Save(ctx, store)
	_ = d.Refresh(ctx, store)
	fmt.Println("refreshed:", d.Deps["user"], d.Deps["api_key"], d.Len())
	// Output:
	// loaded: ada <nil>
	// refreshed: grace sk-from-the-environment 2
}
