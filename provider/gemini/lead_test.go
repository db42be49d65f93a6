package gemini_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

const lead = "Continue."

// A context whose task is all in the instructions (its system prompt, or a
// view of system messages only), before the model's first reply: the
// contents are one user content of the lead text, not none (which the API
// refuses), and the instructions are the system instruction.
func TestInstructionsOnly(t *testing.T) {
	prompt := nous.NewContext(nous.WithSystemPrompt("You are a weather agent. Find the weather in Paris."))
	messages := nous.NewContext()
	must(t, messages.AddMessages(msg(nous.SystemMessage("You are a weather agent.")), msg(nous.SystemMessage("Find the weather in Paris."))))
	for name, c := range map[string]*nous.Context{"system prompt": prompt, "system messages": messages} {
		t.Run(name, func(t *testing.T) {
			body := send(t, c)
			w := decodeBody(t, body)
			if len(w.Contents) != 1 || w.Contents[0].Role != genai.RoleUser || len(w.Contents[0].Parts) != 1 || w.Contents[0].Parts[0].Text != lead {
				t.Errorf("contents are not one user content of %q:\n%s", lead, body)
			}
			if w.SystemInstruction == nil || !strings.Contains(w.SystemInstruction.Parts[len(w.SystemInstruction.Parts)-1].Text, "Paris") {
				t.Errorf("the task is not the system instruction:\n%s", body)
			}
			if c.Len() != len(c.Messages()) || (name == "system prompt" && c.Len() != 0) {
				t.Error("the view was changed")
			}
		})
	}
}

// geminiStep returns the reply of a model that calls the tool "work" with
// item i, its signature and ID as Gemini gives them, read by Message from
// the SDK's response.
func geminiStep(t *testing.T, i int) nous.Message {
	t.Helper()
	sig := base64.StdEncoding.EncodeToString([]byte(fmt.Sprint("sig-", i)))
	return receive(t, fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[
	{"text":"Item %d next. %s"},
	{"functionCall":{"id":"fc_%d","name":"work","args":{"item":%d}},"thoughtSignature":%q}]},"finishReason":"STOP"}],
	"modelVersion":"gemini-test"}`, i, strings.Repeat("word ", 20), i, i, sig))
}

// agentRun returns a context of an agent started by its system prompt
// alone (no user message: all of it the active turn), six steps of the
// model, each a call to a tool answered at length, its results in.
func agentRun(t *testing.T) *nous.Context {
	t.Helper()
	c := nous.NewContext()
	must(t, c.AddMessage(msg(nous.SystemMessage("You are an autonomous agent. Work through the queue."))))
	for i := range 6 {
		m := geminiStep(t, i)
		must(t, c.AddMessages(m, msg(nous.ToolMessage(m.ToolCalls[0].ID, "work", strings.Repeat("done ", 40)))))
	}
	return c
}

// compactRun compacts c to half its size, with a cut inside the active
// turn, the summary of the given role.
func compactRun(t *testing.T, c *nous.Context, role nous.Role) nous.CompactPlan {
	t.Helper()
	whole, err := c.PlanCompaction(1 << 30)
	must(t, err)
	summarize := nous.SummarizerFunc(func(_ context.Context, dropped []nous.Message) (nous.Message, error) {
		return nous.Message{Role: role, Content: fmt.Sprintf("Summary: items 0 to %d are done.", len(dropped)/2-1)}, nil
	})
	p, err := c.Compact(context.Background(), whole.TokensBefore/2, nous.WithSummarizer(summarize),
		nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(20))
	must(t, err)
	if len(p.Dropped) == 0 || p.First != 1 {
		t.Fatalf("setup: the compaction replaced %d..%d", p.First, p.Last)
	}
	if m := c.Messages()[2]; m.Role != nous.RoleAssistant || len(m.ToolCalls) != 1 {
		t.Fatalf("setup: the kept view does not go on with a call of the model: %+v", m)
	}
	return p
}

// An agent's run compacted with a summary of each role, by the library's
// own Compact: the view goes on with the model's call after the summary.
// Each is sent, the contents beginning with a user content: the lead text
// before the model's turn when the summary is a system message (it joins
// the system instruction) or the model's text; the summary itself when it
// is a user message. The calls keep their own signatures, and the request
// keeps every rule of checkRequest.
func TestCompactedRun(t *testing.T) {
	for _, role := range []nous.Role{nous.RoleSystem, nous.RoleUser, nous.RoleAssistant} {
		t.Run(string(role), func(t *testing.T) {
			c := agentRun(t)
			compactRun(t, c, role)
			body, p := sendParams(t, c)
			if problem := checkRequest(p, c.Messages()); problem != "" {
				t.Fatalf("%s\n%s", problem, body)
			}
			w := decodeBody(t, body)
			first, model := w.Contents[0].Parts[0].Text, w.Contents[1]
			switch role {
			case nous.RoleSystem:
				if first != lead || !strings.Contains(w.SystemInstruction.Parts[1].Text, "Summary") {
					t.Errorf("a system summary: the contents begin with %q, the system instruction %v", first, w.SystemInstruction.Parts)
				}
			case nous.RoleUser:
				if !strings.HasPrefix(first, "Summary") || strings.Contains(string(body), lead) {
					t.Errorf("a user summary: the contents begin with %q", first)
				}
			case nous.RoleAssistant:
				if first != lead || !strings.HasPrefix(model.Parts[0].Text, "Summary") {
					t.Errorf("an assistant summary: the contents begin with %q, then %q", first, model.Parts[0].Text)
				}
			}
			call := model.Parts[len(model.Parts)-1]
			if model.Role != genai.RoleModel || call.FunctionCall == nil || !strings.HasPrefix(string(call.ThoughtSignature), "sig-") {
				t.Errorf("the model's call does not follow with its own signature:\n%s", body)
			}
		})
	}
}

// A plan applied with ApplyCompaction, the summary a system message, as a
// runtime that summarizes elsewhere does: the same view, sent the same way.
func TestAppliedCompaction(t *testing.T) {
	c := agentRun(t)
	whole, err := c.PlanCompaction(1 << 30)
	must(t, err)
	p, err := c.PlanCompaction(whole.TokensBefore/2, nous.WithSplitActiveTurn(true), nous.WithSummaryReserve(20))
	must(t, err)
	must(t, c.ApplyCompaction(p, nous.SystemMessage("Summary: the first items are done.")))
	body, params := sendParams(t, c)
	if problem := checkRequest(params, c.Messages()); problem != "" {
		t.Fatalf("%s\n%s", problem, body)
	}
	if w := decodeBody(t, body); w.Contents[0].Parts[0].Text != lead || w.Contents[1].Role != genai.RoleModel {
		t.Errorf("the contents do not begin with the lead text, then the model's turn:\n%s", body)
	}
}

// Before, such a view was refused as a dead end: a model turn with calls
// first. Fill takes it, and leaves params' Model alone.
func TestModelTurnFirst(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.SystemMessage("s")),
		msg(nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"})),
		msg(nous.ToolMessage("c1", "f", "1")), msg(nous.UserMessage("q"))))
	p := nousgemini.Params{Model: "gemini-test"}
	must(t, nousgemini.Fill(&p, c))
	if p.Model != "gemini-test" || p.Contents[0].Role != genai.RoleUser || p.Contents[0].Parts[0].Text != lead || p.Contents[1].Parts[0].FunctionCall == nil {
		t.Errorf("params %+v", p)
	}
}

// A view that ends with the model's answer gets a user content,
// Continue., after it: recent models refuse a request that ends with a
// model turn.
func TestEndsWithUser(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather?")), msg(nous.AssistantMessage("It is sunny.\n"))))
	w := decodeBody(t, send(t, c))
	last := w.Contents[len(w.Contents)-1]
	if len(w.Contents) != 3 || last.Role != genai.RoleUser || last.Parts[0].Text != "Continue." {
		t.Errorf("the request ends with %+v", last)
	}
}

// A response whose parallel calls have one ID: each call gets an ID of its
// own, so that their results pair; the first, Gemini's, is sent with it,
// the other without one.
func TestRepeatedCallIDs(t *testing.T) {
	var resp genai.GenerateContentResponse
	must(t, json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":[
		{"functionCall":{"id":"g1","name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"},
		{"functionCall":{"id":"g1","name":"weather","args":{"city":"Rome"}}}]},"finishReason":"STOP"}]}`), &resp))
	m, _, err := nousgemini.Message(&resp)
	must(t, err)
	if a, b := m.ToolCalls[0].ID, m.ToolCalls[1].ID; a != "g1" || b == "" || b == a {
		t.Fatalf("the calls got IDs %q and %q", a, b)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Paris and Rome?")), m))
	must(t, c.RunToolCalls(context.Background(), m.ToolCalls, func(context.Context, nous.RunContext) nous.ToolResult { return nous.ToolResult{Content: "sunny"} }))
	body := send(t, c)
	if problem := adapttest.CheckGemini(func(id string) bool { return id == "g1" })(body); problem != "" {
		t.Fatalf("%s\n%s", problem, body)
	}
}
