package nousadk_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	nousadk "github.com/nous-go/nous/adk"
	"github.com/nous-go/nous/filestore"
)

// serveMessage runs r on the user's message msg in session id as the
// package doc says a server does when other servers append to the
// session: it runs again on ErrStaleSession, with no message once the
// message is stored, so that the message is stored once and answered.
// It returns the runs it made again.
func serveMessage(ctx context.Context, r *runner.Runner, user, id string, msg *genai.Content) (again int, err error) {
	stored := false
	for ; again < 100; again++ {
		m := msg
		if stored {
			m = nil // the session has the message: answer it as it is now
		}
		err = nil
		for _, e := range r.Run(ctx, user, id, m, agent.RunConfig{}, runner.WithYieldUserMessage()) {
			if e != nil {
				err = e
				break
			}
			if m != nil && !stored {
				stored = true // the first event is the message, as stored
			}
		}
		if !errors.Is(err, nousadk.ErrStaleSession) {
			return again, err
		}
	}
	return again, fmt.Errorf("%d runs of one message were stale: %w", again, err)
}

// answering is a model that answers, in one reply, each user message of
// its request that no reply of the request answers ("re: <message>" a
// line), as a model that reads the conversation would; gate, when set,
// is called before its next reply.
type answering struct {
	mu   sync.Mutex
	gate func(context.Context) error
}

func (*answering) Name() string { return "answering" }

func (m *answering) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		gate := m.gate
		m.gate = nil
		m.mu.Unlock()
		if gate != nil {
			if err := gate(ctx); err != nil {
				yield(nil, err)
				return
			}
		}
		var asked, answered []string
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if c.Role == genai.RoleUser {
					asked = append(asked, p.Text)
				} else {
					answered = append(answered, strings.Split(p.Text, "\n")...)
				}
			}
		}
		var reply []string
		for _, q := range asked {
			if !slices.Contains(answered, "re: "+q) {
				reply = append(reply, "re: "+q)
			}
		}
		if len(reply) == 0 {
			reply = []string{"(nothing new)"}
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText(strings.Join(reply, "\n"), genai.RoleModel), TurnComplete: true}, nil)
	}
}

// userTexts returns the texts of the user's messages of s, in order.
func userTexts(s session.Session) []string {
	var out []string
	for ev := range s.Events().All() {
		if ev.Author == "user" && ev.Content != nil {
			out = append(out, ev.Content.Parts[0].Text)
		}
	}
	return out
}

// waitStored returns once session "chat" holds the user's message text.
func waitStored(ctx context.Context, svc *nousadk.SessionService, text string) error {
	for {
		r, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "ann", SessionID: "chat"})
		if err != nil {
			return err
		}
		if slices.Contains(userTexts(r.Session), text) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// recoveryEnv names the server a test process is: "A:<dir>" or "B:<dir>".
const recoveryEnv = "NOUSADK_RECOVERY_SERVER"

// messages is how many messages each of the two servers is sent.
const messages = 6

// TestRecoveryServer is one of TestTwoServersRecovery's servers, a
// process of its own; run alone, it skips. Server A is sent A1..A6,
// server B B1..B6, in one session of a file store: B is sent Bi once Ai
// is stored, and A's model replies to Ai once Bi is stored, so that A's
// reply is appended to a Session read before Bi, which is stale.
func TestRecoveryServer(t *testing.T) {
	role, dir, ok := strings.Cut(os.Getenv(recoveryEnv), ":")
	if !ok {
		t.Skip("a server of TestTwoServersRecovery")
	}
	ctx := t.Context()
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	llm := &answering{}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Answer."})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: nousadk.NewSessionService(store)})
	if err != nil {
		t.Fatal(err)
	}
	watcher := nousadk.NewSessionService(store)
	again := 0
	for i := 1; i <= messages; i++ {
		switch role {
		case "A":
			llm.mu.Lock()
			llm.gate = func(ctx context.Context) error { return waitStored(ctx, watcher, fmt.Sprint("B", i)) }
			llm.mu.Unlock()
		case "B":
			if err := waitStored(ctx, watcher, fmt.Sprint("A", i)); err != nil {
				t.Fatal(err)
			}
		}
		n, err := serveMessage(ctx, r, "ann", "chat", genai.NewContentFromText(fmt.Sprint(role, i), genai.RoleUser))
		if err != nil {
			t.Fatalf("message %s%d: %v", role, i, err)
		}
		again += n
	}
	fmt.Printf("server %s ran again %d times\n", role, again)
}

// Two servers, each a process, ADK's runner in each, serve one session:
// 12 messages sent, 12 stored, each once and each answered, though every
// reply server A's model makes first is appended to a stale Session.
func TestTwoServersRecovery(t *testing.T) {
	if os.Getenv(recoveryEnv) != "" {
		t.Skip("a server process")
	}
	dir := t.TempDir()
	store := openDir(t, dir)
	svc := nousadk.NewSessionService(store)
	mustCreate(t, svc, "app", "ann", "chat", nil)
	outs := make([]strings.Builder, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, role := range []string{"A", "B"} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRecoveryServer$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), recoveryEnv+"="+role+":"+dir)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		wg.Go(func() { errs[i] = cmd.Run() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("server %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if m := regexp.MustCompile(`server A ran again (\d+) times`).FindStringSubmatch(outs[0].String()); m == nil {
		t.Fatalf("server A did not say how often it ran again:\n%s", outs[0].String())
	} else if n, _ := strconv.Atoi(m[1]); n < messages {
		t.Errorf("server A ran again %d times, want at least one a message", n)
	}
	got := mustGet(t, nousadk.NewSessionService(store), "app", "ann", "chat")
	asked := userTexts(got)
	var want []string
	for i := 1; i <= messages; i++ {
		want = append(want, fmt.Sprint("A", i), fmt.Sprint("B", i))
	}
	if !sameSet(asked, want) {
		t.Errorf("the stored user messages are %v, want each of %v once", asked, want)
	}
	for i, ev := range slices.Collect(got.Events().All()) {
		if ev.Author != "user" {
			continue
		}
		q := ev.Content.Parts[0].Text
		answered := slices.ContainsFunc(slices.Collect(got.Events().All())[i+1:], func(r *session.Event) bool {
			return r.Author == "assistant" && r.Content != nil && slices.Contains(strings.Split(r.Content.Parts[0].Text, "\n"), "re: "+q)
		})
		if !answered {
			t.Errorf("%s is not answered after it", q)
		}
	}
	t.Logf("%d events; server A: %s", got.Events().Len(), outs[0].String())
}
