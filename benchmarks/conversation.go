package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/nous-go/nous"
)

// Conversation is one implementation of the agent conversation.
type Conversation interface {
	// Turn runs turn i: user message, history walk, assistant message with
	// a tool call, the tool's state change, tool result. It returns the
	// number of messages the walk put in the model request.
	Turn(i int) (int, error)
	// Summary returns the number of messages in the history, the number of
	// cities in the "cities" list and the "last_city" value.
	Summary() (messages, cities int, last string, err error)
}

const toolName = "get_weather"

var cityNames = []string{"Paris", "Lyon", "Nice", "Lille", "Nantes", "Bordeaux", "Toulouse"}

// turnData is what turn i says and does, the same for every implementation.
type turnData struct {
	question, callID, city, result string
	args                           json.RawMessage
}

func turn(i int) turnData {
	city := cityNames[i%len(cityNames)]
	return turnData{
		question: "Turn " + strconv.Itoa(i) + ": what is the weather in " + city + " today?",
		callID:   "call_" + strconv.Itoa(i),
		city:     city,
		args:     json.RawMessage(`{"city":"` + city + `"}`),
		result:   `{"temp_c":21,"sky":"clear"}`,
	}
}

// Nous is the conversation on a [nous.Context]. The walk ranges over
// Context.All, the read path nous documents for building a request: it
// copies each message value into the request, sharing its maps and slices
// read-only with the log.
//
// Every implementation walks into a request buffer that it keeps across
// turns, so that the benchmark measures the history and not the
// allocation of a buffer of the same size in each (which on a machine with
// costly page faults would dominate). ADK's runner makes a new one for each
// request: reusing it favours ADK.
type Nous struct {
	c   *nous.Context
	req []nous.Message // the runner's request buffer, reused across turns
	// Copy makes the walk use Context.Messages instead, which deep-copies
	// every message that carries maps or slices.
	Copy bool
}

// NewNous returns an empty nous conversation.
func NewNous(copyWalk bool) *Nous {
	return &Nous{c: nous.NewContext(nous.WithSystemPrompt("You answer weather questions.")), Copy: copyWalk}
}

// Turn implements [Conversation].
func (n *Nous) Turn(i int) (int, error) {
	t := turn(i)
	c := n.c
	if err := c.AddMessage(nous.UserMessage(t.question)); err != nil {
		return 0, err
	}
	var req []nous.Message
	if n.Copy {
		req = c.Messages()
	} else {
		req = n.req[:0]
		for _, m := range c.All() {
			req = append(req, m)
		}
		n.req = req
	}
	return len(req), answer(c, t)
}

// answer adds the rest of turn t to c, after the walk: the assistant's
// message with the tool call, the tool's state change and its result.
func answer(c *nous.Context, t turnData) error {
	if err := c.AddMessage(nous.AssistantMessage("", nous.ToolCall{ID: t.callID, Name: toolName, Arguments: t.args})); err != nil {
		return err
	}
	u := nous.NewContextUpdate().Set("last_city", t.city).Append("cities", t.city)
	if err := u.Apply(c); err != nil {
		return err
	}
	return c.AddMessage(nous.ToolMessage(t.callID, toolName, t.result))
}

// Summary implements [Conversation].
func (n *Nous) Summary() (int, int, string, error) {
	cities, _ := nous.Dep[[]any](n.c.Deps, "cities")
	last, _ := nous.Dep[string](n.c.Deps, "last_city")
	return n.c.Len(), len(cities), last, nil
}

// ADK is the conversation on ADK-Go's in-memory session service, used the
// way ADK's runner uses it: each turn (one Runner.Run) starts with
// Service.Get, every event is made with session.NewEvent and stored with
// Service.AppendEvent, the tool's state change travels in the StateDelta of
// its function-response event, and the history is walked through
// Session.Events, as ADK's contents request processor does.
type ADK struct {
	svc  session.Service
	ctx  context.Context
	get  session.GetRequest
	req  []*genai.Content // the request buffer, reused across turns (ADK's runner makes a new one)
	Copy bool             // copy each content into the request, as ADK's runner does
}

// NewADK returns an empty ADK conversation. With copyWalk, the walk copies
// every content into the request, as ADK's contents request processor does
// (there with a reflection-based deep copy; here with a hand-written one,
// which is cheaper, so the comparison favours ADK). Without it, the walk
// only collects the contents' pointers: the least any request built from
// ADK's session can cost.
func NewADK(copyWalk bool) (*ADK, error) {
	return newADK(session.InMemoryService(), copyWalk, "s1")
}

// newADK starts a conversation of session id in svc.
func newADK(svc session.Service, copyWalk bool, id string) (*ADK, error) {
	a := &ADK{
		svc:  svc,
		ctx:  context.Background(),
		get:  session.GetRequest{AppName: "weather", UserID: "ada", SessionID: id},
		Copy: copyWalk,
	}
	_, err := a.svc.Create(a.ctx, &session.CreateRequest{AppName: a.get.AppName, UserID: a.get.UserID, SessionID: a.get.SessionID})
	return a, err
}

// Turn implements [Conversation].
func (a *ADK) Turn(i int) (int, error) {
	t := turn(i)
	resp, err := a.svc.Get(a.ctx, &a.get)
	if err != nil {
		return 0, err
	}
	sess := resp.Session
	inv := "inv_" + strconv.Itoa(i)

	user := session.NewEvent(a.ctx, inv)
	user.Author = "user"
	user.LLMResponse = model.LLMResponse{Content: genai.NewContentFromText(t.question, genai.RoleUser)}
	if err := a.svc.AppendEvent(a.ctx, sess, user); err != nil {
		return 0, err
	}

	events := sess.Events()
	req := a.req[:0]
	for e := range events.All() {
		if e.Content == nil || e.Content.Role == "" || len(e.Content.Parts) == 0 {
			continue
		}
		if a.Copy {
			req = append(req, copyContent(e.Content))
		} else {
			req = append(req, e.Content)
		}
	}
	a.req = req

	call := session.NewEvent(a.ctx, inv)
	call.Author = "weather_agent"
	call.LLMResponse = model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{
		FunctionCall: &genai.FunctionCall{ID: t.callID, Name: toolName, Args: map[string]any{"city": t.city}},
	}}}}
	if err := a.svc.AppendEvent(a.ctx, sess, call); err != nil {
		return 0, err
	}

	// The tool: read the list from the state, append, and put both keys in
	// the delta of its response event. The list is copied, not appended in
	// place, because the state shares it with the stored session.
	var cities []any
	if v, err := sess.State().Get("cities"); err == nil {
		cities, _ = v.([]any)
	}
	result := session.NewEvent(a.ctx, inv)
	result.Author = "weather_agent"
	result.LLMResponse = model.LLMResponse{Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{
		FunctionResponse: &genai.FunctionResponse{ID: t.callID, Name: toolName, Response: map[string]any{"temp_c": 21, "sky": "clear"}},
	}}}}
	result.Actions.StateDelta["last_city"] = t.city
	result.Actions.StateDelta["cities"] = append(slices.Clip(cities), t.city)
	if err := a.svc.AppendEvent(a.ctx, sess, result); err != nil {
		return 0, err
	}
	return len(req), nil
}

// Summary implements [Conversation].
func (a *ADK) Summary() (int, int, string, error) {
	resp, err := a.svc.Get(a.ctx, &a.get)
	if err != nil {
		return 0, 0, "", err
	}
	s := resp.Session
	n := 0
	for e := range s.Events().All() {
		if e.Content != nil {
			n++
		}
	}
	cities, err := s.State().Get("cities")
	if err != nil {
		return 0, 0, "", err
	}
	last, err := s.State().Get("last_city")
	if err != nil {
		return 0, 0, "", err
	}
	return n, len(cities.([]any)), last.(string), nil
}

// copyContent deep-copies c down to the maps of its function calls and
// responses, which is what ADK's request processor needs from its
// reflection-based copy for these contents.
func copyContent(c *genai.Content) *genai.Content {
	out := &genai.Content{Role: c.Role, Parts: make([]*genai.Part, len(c.Parts))}
	for i, p := range c.Parts {
		q := *p
		if p.FunctionCall != nil {
			fc := *p.FunctionCall
			fc.Args = maps.Clone(fc.Args)
			q.FunctionCall = &fc
		}
		if p.FunctionResponse != nil {
			fr := *p.FunctionResponse
			fr.Response = maps.Clone(fr.Response)
			q.FunctionResponse = &fr
		}
		out.Parts[i] = &q
	}
	return out
}

// Naive is the conversation on a context that keeps its events in a slice
// and re-materializes the whole message list from them on every add, as a
// context without an incremental fold does. The walk ranges over that list.
type Naive struct {
	req      []nous.Message // the request buffer, reused across turns
	events   []naiveEvent
	messages []nous.Message
	deps     map[string]any
}

type naiveEvent struct {
	seq     int64
	message nous.Message
	at      time.Time
}

// NewNaive returns an empty naive conversation.
func NewNaive() *Naive {
	n := &Naive{deps: map[string]any{}}
	n.add(nous.SystemMessage("You answer weather questions."))
	return n
}

func (n *Naive) add(m nous.Message) {
	n.events = append(n.events, naiveEvent{seq: int64(len(n.events) + 1), message: m, at: time.Now()})
	msgs := make([]nous.Message, 0, len(n.events))
	for i := range n.events {
		msgs = append(msgs, n.events[i].message)
	}
	n.messages = msgs
}

// Turn implements [Conversation].
func (n *Naive) Turn(i int) (int, error) {
	t := turn(i)
	n.add(nous.UserMessage(t.question))
	req := append(n.req[:0], n.messages...)
	n.req = req
	n.add(nous.AssistantMessage("", nous.ToolCall{ID: t.callID, Name: toolName, Arguments: t.args}))
	cities, _ := n.deps["cities"].([]any)
	n.deps["last_city"] = t.city
	n.deps["cities"] = append(slices.Clip(cities), t.city)
	n.add(nous.ToolMessage(t.callID, toolName, t.result))
	return len(req), nil
}

// Summary implements [Conversation].
func (n *Naive) Summary() (int, int, string, error) {
	cities, _ := n.deps["cities"].([]any)
	last, _ := n.deps["last_city"].(string)
	return len(n.messages), len(cities), last, nil
}

// Run runs turns turns of c and returns an error naming the turn that
// failed, if any.
func Run(c Conversation, turns int) error {
	for i := range turns {
		if _, err := c.Turn(i); err != nil {
			return fmt.Errorf("turn %d: %w", i, err)
		}
	}
	return nil
}
