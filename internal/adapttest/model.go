package adapttest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/agent"
)

// OwnTool is the tool a [ModelFake]'s model has in its own params, beside
// those each call asks for.
var OwnTool = nous.Tool{Name: "lookup_notes", Description: "Looks up the user's notes."}

// ModelReply is one answer of a provider's scripted model, as [RunModel]
// scripts it.
type ModelReply struct {
	Text      string
	ToolCalls []nous.ToolCall
	Usage     nous.Usage
	// Cut makes the answer a stream cut short: the fake's recorded stream
	// up to an event after some text, then the connection cut, which
	// gives ModelFake.CutText.
	Cut bool
}

// ModelServer is a provider's model on its scripted server.
type ModelServer struct {
	// Model is the adapter's [nous.Model], made with params that hold
	// [OwnTool] and spare capacity after it.
	Model nous.Model
	// Requests returns the JSON bodies of the requests so far.
	Requests func() [][]byte
	// Intact reports whether the params Model was made with are as they
	// were: their one tool, and nothing written in the spare capacity
	// after it.
	Intact func() bool
}

// ModelFake is an adapter's scripted model, as [RunModel] drives it.
type ModelFake struct {
	// Provider is the provider the steps name.
	Provider string
	// Start starts the scripted server, closed when t ends, that answers
	// the requests with replies in turn.
	Start func(t *testing.T, replies ...ModelReply) ModelServer
	// ToolNames returns the names of the tools a request body offers, in
	// order.
	ToolNames func(t testing.TB, body []byte) []string
	// CutText is the text the stream of a Cut reply gives.
	CutText string
}

// RunModel checks f's [nous.Model]: a call adds the reply and ends the
// step; a call with OnDelta streams; the tools of a request go after the
// params' own, in a copy; a stream cut short adds its partial reply; and
// an [agent.Runner] runs a turn on it.
func RunModel(t *testing.T, f ModelFake) {
	t.Run("AddsReplyAndStep", func(t *testing.T) { modelReply(t, f, false) })
	t.Run("StreamsDeltas", func(t *testing.T) { modelReply(t, f, true) })
	t.Run("SendsRequestTools", func(t *testing.T) { modelTools(t, f) })
	t.Run("CutStreamAddsPartial", func(t *testing.T) { modelCut(t, f) })
	t.Run("RunsTurn", func(t *testing.T) { modelTurn(t, f, false) })
	t.Run("RunsStreamedTurn", func(t *testing.T) { modelTurn(t, f, true) })
}

// asked returns a context holding the user's question.
func asked(t testing.TB) *nous.Context {
	c := nous.NewContext()
	Must(t, c.AddMessage(nous.UserMessage("What is the capital of France?")))
	return c
}

// texts returns what it adds to and the OnDelta that adds each text delta.
func texts() (*strings.Builder, func(nous.Delta)) {
	var b strings.Builder
	return &b, func(d nous.Delta) {
		if d.Kind == nous.DeltaText {
			b.WriteString(d.Text)
		}
	}
}

// lastStep returns the step of c's last step_end, and false for none.
func lastStep(c *nous.Context) (nous.Step, bool) {
	events := c.Log().Events()
	for i := len(events) - 1; i >= 0; i-- {
		if s, ok := nous.StepOf(events[i]); ok {
			return s, true
		}
	}
	return nous.Step{}, false
}

// modelReply checks a call, streamed or not: the reply added, the step
// ended with its usage, and a stream's deltas the reply's text.
func modelReply(t *testing.T, f ModelFake, stream bool) {
	s := f.Start(t, ModelReply{Text: "Paris, on the Seine.", Usage: nous.Usage{InputTokens: 7, OutputTokens: 3}})
	c := asked(t)
	deltas, onDelta := texts()
	req := nous.ModelRequest{}
	if stream {
		req.OnDelta = onDelta
	}
	m, err := s.Model.Call(context.Background(), c, req)
	if err != nil || m.Text() != "Paris, on the Seine." || c.Len() != 2 {
		t.Fatalf("got %q, %v, and %d messages", m.Text(), err, c.Len())
	}
	if last, _ := c.LastMessage(); last.Text() != m.Text() || last.Role != nous.RoleAssistant {
		t.Errorf("the context's last message is %s %q", last.Role, last.Text())
	}
	if got := deltas.String(); stream && got != m.Text() {
		t.Errorf("the deltas make %q, the reply is %q", got, m.Text())
	} else if !stream && got != "" {
		t.Errorf("a call without OnDelta gave deltas %q", got)
	}
	step, ok := lastStep(c)
	if !ok || step.Provider != f.Provider || step.Error != "" || step.Usage.Requests != 1 || step.Usage.InputTokens != 7 || step.Usage.OutputTokens != 3 || c.Usage != step.Usage {
		t.Errorf("the step: %+v (%v), usage %+v", step, ok, c.Usage)
	}
}

// modelTools checks that each call offers the params' tool, then its
// request's, on a copy of the params, also from calls at once; and that a
// tool the adapter refuses sends nothing.
func modelTools(t *testing.T, f ModelFake) {
	const n = 4
	replies := make([]ModelReply, 3+n)
	for i := range replies {
		replies[i] = ModelReply{Text: "Paris."}
	}
	s := f.Start(t, replies...)
	weather := nous.Tool{Name: "get_weather", Description: "Gets the weather of a city.", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	clock := nous.Tool{Name: "get_time", Description: "Gets the time."}
	for _, tools := range [][]nous.Tool{{weather}, {clock}, nil} {
		if _, err := s.Model.Call(context.Background(), asked(t), nous.ModelRequest{Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	want := [][]string{{OwnTool.Name, "get_weather"}, {OwnTool.Name, "get_time"}, {OwnTool.Name}}
	for i, body := range s.Requests() {
		if got := f.ToolNames(t, body); !slices.Equal(got, want[i]) {
			t.Errorf("request %d offers %q, want %q", i+1, got, want[i])
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tools := []nous.Tool{weather, clock}[i%2:]
			_, errs[i] = s.Model.Call(context.Background(), asked(t), nous.ModelRequest{Tools: tools})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if !s.Intact() {
		t.Error("a call wrote to the params the model was made with")
	}
	c := asked(t)
	if _, err := s.Model.Call(context.Background(), c, nous.ModelRequest{Tools: []nous.Tool{{Name: "no spaces"}}}); !errors.Is(err, nous.ErrInvalidTool) || len(s.Requests()) != 3+n || c.Len() != 1 {
		t.Errorf("an invalid tool: %v, %d requests, %d messages", err, len(s.Requests()), c.Len())
	}
}

// modelCut checks a stream cut short: its partial reply added, marked,
// after a step that says why, and the error wraps nous.ErrInterrupted.
func modelCut(t *testing.T, f ModelFake) {
	s := f.Start(t, ModelReply{Cut: true})
	c := asked(t)
	deltas, onDelta := texts()
	m, err := s.Model.Call(context.Background(), c, nous.ModelRequest{OnDelta: onDelta})
	if !errors.Is(err, nous.ErrInterrupted) || !m.Interrupted() || m.Text() != f.CutText {
		t.Fatalf("got %q (interrupted: %v), %v", m.Text(), m.Interrupted(), err)
	}
	if last, _ := c.LastMessage(); c.Len() != 2 || !last.Interrupted() || last.Text() != f.CutText {
		t.Errorf("%d messages, the last %q (interrupted: %v)", c.Len(), last.Text(), last.Interrupted())
	}
	if deltas.String() != f.CutText {
		t.Errorf("the deltas make %q", deltas.String())
	}
	if step, ok := lastStep(c); !ok || step.Provider != f.Provider || step.Error == "" {
		t.Errorf("the cut call's step: %+v (%v)", step, ok)
	}
}

// modelTurn runs a turn through an agent.Runner on f's model: the
// model's call runs, its result goes back, and the final reply is added.
func modelTurn(t *testing.T, f ModelFake, stream bool) {
	call := nous.ToolCall{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)}
	s := f.Start(t, ModelReply{ToolCalls: []nous.ToolCall{call}}, ModelReply{Text: "Sunny in Paris, 18°C."})
	var cities []string
	weather, err := agent.NewTool("get_weather", "Gets the weather of a city.", func(_ context.Context, _ nous.RunContext, args struct {
		City string `json:"city"`
	}) (string, nous.ContextUpdate, error) {
		cities = append(cities, args.City)
		return "sunny, 18°C", nous.ContextUpdate{}, nil
	})
	Must(t, err)
	r := &agent.Runner{Model: s.Model, Tools: []agent.Tool{weather}, Stream: stream}
	c := nous.NewContext()
	turn, err := r.Continue(context.Background(), c, agent.Input{Messages: []nous.Message{nous.UserMessage("Weather in Paris?")}})
	if err != nil || len(turn.Waiting) != 0 || turn.Reply.Text() != "Sunny in Paris, 18°C." {
		t.Fatalf("turn: %v, reply %q, waiting %d", err, turn.Reply.Text(), len(turn.Waiting))
	}
	if !slices.Equal(cities, []string{"Paris"}) {
		t.Errorf("the tool ran for %q", cities)
	}
	var roles []nous.Role
	for _, m := range c.All() {
		roles = append(roles, m.Role)
	}
	if want := []nous.Role{nous.RoleUser, nous.RoleAssistant, nous.RoleTool, nous.RoleAssistant}; !slices.Equal(roles, want) {
		t.Errorf("the turn's messages: %v, want %v", roles, want)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !slices.Contains(f.ToolNames(t, reqs[0]), "get_weather") || !bytes.Contains(reqs[1], []byte("sunny, 18")) {
		t.Errorf("%d requests; the second should hold the tool's result:\n%s", len(reqs), bytes.Join(reqs, []byte("\n")))
	}
}
