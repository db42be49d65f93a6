package nousadk_test

import (
	"testing"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	nousadk "github.com/nous-go/nous/adk"
)

// BenchmarkColdGet measures a Get, by a service that does not hold it, of
// a session of 10,000 events on the file store.
func BenchmarkColdGet(b *testing.B) {
	store := openDirB(b)
	svc := nousadk.NewSessionService(store)
	r, err := svc.Create(bg, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		ev := session.NewEvent(bg, "inv")
		ev.Author = "user"
		ev.LLMResponse = model.LLMResponse{Content: genai.NewContentFromText("What's the weather in Paris today, and tomorrow?", genai.RoleUser)}
		_ = i
		if err := svc.AppendEvent(bg, r.Session, ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := nousadk.NewSessionService(store).Get(bg, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
		if err != nil || got.Session.Events().Len() != 10_000 {
			b.Fatal(err)
		}
	}
}
