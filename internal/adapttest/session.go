package adapttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// A Reply makes a random reply of one provider's model, as its adapter
// reads it from the API's answer: what a runtime adds to the context.
type Reply func(r *rand.Rand) nous.Message

// A Sender is one provider's adapter as a session meets it: Fill makes the
// request of c (params, contents) or refuses c with the adapter's error;
// Check returns what is wrong with a request made (its JSON, as the SDK
// sends it), "" for nothing.
type Sender struct {
	Name  string
	Fill  func(c *nous.Context) (request any, err error)
	Check func(body []byte) string
}

// Sessions runs n random sessions of about steps operations each, made of
// nothing but the library's own API: user messages, replies of the
// providers of replies (switching among them at random), RunToolCalls on
// what the view waits for (tools that succeed, fail, answer at length or
// with nothing), a user who moves on with calls open, PatchDanglingToolCalls,
// Compact at random budgets with summaries of every role (with and without
// a target and a tool-result limit), an overlay, Clone, a JSON round trip,
// Save and Load through a store. After each operation every sender either
// makes a request that passes its Check, or refuses the view with a
// *nous.ViewError: only for a pairing that fails (wrapping nous.ErrUnpaired),
// and then the view with its dangling calls patched is sent. So nothing the
// library produces is refused for good.
func Sessions(t *testing.T, stream uint64, n, steps int, replies []Reply, senders ...Sender) {
	t.Helper()
	made := make([]int, len(senders))
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, stream))
		s := newSession(t, r, replies)
		for step := range steps {
			op := s.step()
			for k, snd := range senders {
				if s.send(snd, fmt.Sprintf("seed %d, step %d (%s)", seed, step, op)) {
					made[k]++
				}
			}
		}
	}
	for k, snd := range senders {
		if made[k] < n*steps/3 {
			t.Errorf("%s: %d requests made of %d views: the sessions no longer reach sendable views", snd.Name, made[k], n*steps)
		}
	}
}

type session struct {
	t        *testing.T
	r        *rand.Rand
	c        *nous.Context
	replies  []Reply
	provider int
	store    *storetest.Memory
}

func newSession(t *testing.T, r *rand.Rand, replies []Reply) *session {
	prompt := []string{"", "Be brief.", "You are a weather agent. Find the weather in Paris."}[r.IntN(3)]
	s := &session{t: t, r: r, replies: replies, provider: r.IntN(len(replies)), store: storetest.NewMemory()}
	s.c = nous.NewContext(nous.WithSystemPrompt(prompt))
	return s
}

var userTexts = []string{"What is the weather in Paris?", "and tomorrow?", "thanks", "résumé é", "Summarize the file."}

// step makes one random operation on the session and returns its name.
func (s *session) step() string {
	r, c := s.r, s.c
	ctx := context.Background()
	switch k := r.IntN(20); {
	case k < 3:
		s.must(c.AddMessage(nous.UserMessage(userTexts[r.IntN(len(userTexts))])), "a user message")
		return "user"
	case k < 8:
		if open := openCalls(c); len(open) > 0 && r.IntN(4) > 0 {
			return s.runTools(open)
		}
		m := s.replies[s.provider](r)
		s.must(c.AddMessage(m), "a reply")
		return "reply"
	case k < 11:
		if open := openCalls(c); len(open) > 0 {
			return s.runTools(open)
		}
		return "no tools"
	case k < 12:
		c.PatchDanglingToolCalls()
		return "patch"
	case k < 14:
		return s.compact()
	case k < 15:
		s.provider = r.IntN(len(s.replies))
		return "switch"
	case k < 16:
		s.c = c.Clone()
		return "clone"
	case k < 17:
		data, err := c.Serialize()
		s.must(err, "Serialize")
		s.c, err = nous.Deserialize(data)
		s.must(err, "Deserialize")
		return "round trip"
	case k < 18:
		if err := c.Save(ctx, s.store); errors.Is(err, nous.ErrConflict) {
			return "save: a copy of a log another copy saved" // a round trip's copy, say
		} else {
			s.must(err, "Save")
		}
		loaded, err := nous.Load(ctx, s.store, c.Log().ID())
		s.must(err, "Load")
		loaded.SystemPrompt = c.SystemPrompt // runtime fields: the store keeps neither
		loaded.SetSystemPromptOverlay(c.SystemPromptOverlay())
		s.c = loaded
		return "save and load"
	case k < 19:
		c.SetSystemPromptOverlay([]string{"", "Today is Tuesday.", "Answer in French."}[r.IntN(3)])
		return "overlay"
	default:
		m := s.replies[s.provider](r)
		s.must(c.AddMessage(m), "a reply")
		return "reply"
	}
}

// runTools runs some or all of open, the calls the view waits for, with a
// tool that succeeds, fails, answers at length or with nothing.
func (s *session) runTools(open []nous.ToolCall) string {
	calls := open
	if len(open) > 1 && s.r.IntN(5) == 0 {
		calls = open[:1+s.r.IntN(len(open)-1)] // the rest stays open: a crash mid-turn
	}
	kinds := make([]int, len(calls))
	for i := range kinds {
		kinds[i] = s.r.IntN(6)
	}
	tool := func(_ context.Context, rc nous.RunContext) nous.ToolResult {
		i := slices.IndexFunc(calls, func(tc nous.ToolCall) bool { return tc.ID == rc.Call.ID })
		switch kinds[i] {
		case 0:
			return nous.ToolResult{Err: errors.New("invalid arguments: unexpected end of JSON input")}
		case 1:
			return nous.ToolResult{Content: strings.Repeat("a line of a long file\n", 200)}
		case 2:
			return nous.ToolResult{}
		case 3:
			return nous.ToolResult{Content: `{"temperature": 21, "unit": "C"}`}
		default:
			return nous.ToolResult{Content: "sunny"}
		}
	}
	s.must(s.c.RunToolCalls(context.Background(), calls, tool), "RunToolCalls")
	return fmt.Sprintf("run %d of %d calls", len(calls), len(open))
}

var summaryRoles = []nous.Role{nous.RoleSystem, nous.RoleUser, nous.RoleAssistant}

// compact compacts the view to a random budget, with a summary of a random
// role; a view that cannot fit is left as it is.
func (s *session) compact() string {
	role := summaryRoles[s.r.IntN(len(summaryRoles))]
	summarize := nous.SummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, error) {
		return nous.Message{Role: role, Content: fmt.Sprintf("Summary of %d messages: the user asked about the weather.", len(dropped))}, nil
	})
	opts := []nous.CompactOption{nous.WithSummarizer(summarize), nous.WithSummaryReserve(32)}
	budget := 60 + s.r.IntN(1500)
	if s.r.IntN(2) == 0 {
		opts = append(opts, nous.WithTarget(budget/2))
	}
	if s.r.IntN(2) == 0 {
		opts = append(opts, nous.WithToolResultLimit(40))
	}
	_, err := s.c.Compact(context.Background(), budget, opts...)
	if err != nil && !errors.Is(err, nous.ErrOverBudget) {
		s.t.Fatalf("Compact(%d) with a %s summary: %v", budget, role, err)
	}
	return fmt.Sprintf("compact to %d, a %s summary", budget, role)
}

func (s *session) must(err error, what string) {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
}

// send checks snd on the session's view: a request that passes its Check,
// or a refusal for a pairing that fails, after which the patched view is
// sent. It reports whether snd made a request of the view itself.
func (s *session) send(snd Sender, where string) bool {
	t := s.t
	t.Helper()
	req, err := snd.Fill(s.c)
	if err == nil {
		s.check(snd, req, where)
		return true
	}
	var e *nous.ViewError
	if !errors.As(err, &e) || e.Provider == "" {
		t.Fatalf("%s: %s: %v is not a *nous.ViewError naming its adapter", where, snd.Name, err)
	}
	if !errors.Is(err, nous.ErrUnpaired) || s.c.CheckToolPairing() == nil {
		t.Fatalf("%s: %s refused a view the library made: %v\n%s", where, snd.Name, err, describe(s.c))
	}
	patched := s.c.Clone()
	patched.PatchDanglingToolCalls()
	req, err = snd.Fill(patched)
	if err != nil {
		t.Fatalf("%s: %s refused the view with its dangling calls patched: %v\n%s", where, snd.Name, err, describe(patched))
	}
	s.check(snd, req, where+", patched")
	return false
}

func (s *session) check(snd Sender, req any, where string) {
	s.t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		s.t.Fatalf("%s: %s: the request does not encode: %v", where, snd.Name, err)
	}
	if problem := snd.Check(body); problem != "" {
		s.t.Fatalf("%s: %s: %s\n%s\n%s", where, snd.Name, problem, body, describe(s.c))
	}
}

// openCalls returns the calls of the view's last assistant message that no
// tool message after it answers, when nothing but tool messages follows it.
func openCalls(c *nous.Context) []nous.ToolCall {
	msgs := c.Messages()
	answered := map[string]bool{}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch m.Role {
		case nous.RoleTool:
			answered[m.ToolCallID] = true
			continue
		case nous.RoleAssistant:
			var open []nous.ToolCall
			for _, tc := range m.ToolCalls {
				if !answered[tc.ID] {
					open = append(open, tc)
				}
			}
			return open
		}
		return nil
	}
	return nil
}

// describe returns c's view in short, for a failure's message.
func describe(c *nous.Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "system prompt %q, overlay %q\n", c.SystemPrompt, c.SystemPromptOverlay())
	for i, m := range c.All() {
		fmt.Fprintf(&b, "%3d %-9s %q", i, m.Role, m.Content)
		for _, p := range m.Parts {
			fmt.Fprintf(&b, " [%s %q %v]", p.Type, p.Content, p.Options)
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, " call(%s %s %s)", tc.ID, tc.Name, tc.Arguments)
		}
		if m.ToolCallID != "" {
			fmt.Fprintf(&b, " answers %s", m.ToolCallID)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
