package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/viewgen"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies in testdata/")

const cannedText = `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],
"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":6},"modelVersion":"gemini-test"}`

// client returns a client of a fake API answering responses in turn.
func client(t testing.TB, responses ...string) (*genai.Client, *adapttest.Fake) {
	for _, v := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL"} {
		if tt, ok := t.(*testing.T); ok {
			tt.Setenv(v, "")
		}
	}
	f, url := adapttest.Serve(t, func(string) string { return cannedText }, responses...)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: url}})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

// send fills a request of c, sends it through the SDK to a fake API and
// returns the body the SDK sent.
func send(t *testing.T, c *nous.Context) []byte {
	t.Helper()
	body, _ := sendParams(t, c)
	return body
}

// sendParams is send, returning the params filled too.
func sendParams(t *testing.T, c *nous.Context) ([]byte, nousgemini.Params) {
	t.Helper()
	cl, f := client(t)
	p := nousgemini.Params{Model: "gemini-test", Config: &genai.GenerateContentConfig{}}
	must(t, nousgemini.Fill(&p, c))
	_, err := cl.Models.GenerateContent(context.Background(), p.Model, p.Contents, p.Config)
	must(t, err)
	return f.Bodies[0], p
}

// wire is a request body as the SDK sends it, decoded.
type wire struct {
	Contents          []*genai.Content `json:"contents"`
	SystemInstruction *genai.Content   `json:"systemInstruction"`
}

// decodeBody decodes a request body the SDK sent.
func decodeBody(t *testing.T, body []byte) wire {
	t.Helper()
	var w wire
	must(t, json.Unmarshal(body, &w))
	return w
}

// fill fills params of c with an empty config, failing t on an error.
func fill(t *testing.T, c *nous.Context) nousgemini.Params {
	t.Helper()
	p := nousgemini.Params{Config: &genai.GenerateContentConfig{}}
	must(t, nousgemini.Fill(&p, c))
	return p
}

func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	adapttest.Golden(t, *update, name, body)
}

var must = adapttest.Must

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func msg(m nous.Message) nous.Message { m.CreatedAt = at; return m }

// A tool loop: the system instruction with its overlay, parallel calls
// (a runtime's: sent without IDs) answered in one user content with one
// functionResponse part each (an error, a JSON object, a result without its
// tool's name, resolved from the call); then the user's text, a later
// system message as user text and another user message, in one user
// content of their own after the responses.
func TestToolLoop(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	c.SetSystemPromptOverlay("Answer in French.")
	a := nous.ToolCall{ID: "call_a", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris","n":3}`)}
	b := nous.ToolCall{ID: "call_b", Name: "time"}
	d := nous.ToolCall{ID: "call_c", Name: "lookup", Arguments: json.RawMessage(`{}`)}
	foreign := nous.ThinkingPart("thought elsewhere", "sig")
	foreign.Options["provider"] = "anthropic"
	assistant := msg(nous.AssistantMessage("Checking.", a, b, d))
	assistant.Parts = []nous.ContentPart{foreign}
	unnamed := msg(nous.ToolMessage(d.ID, "", `{"found": true, "id": 7}`))
	must(t, c.AddMessages(
		msg(nous.UserMessage("Weather, time and a lookup?")),
		msg(nous.UserMessage("  ")),
		assistant,
		msg(nous.ToolErrorMessage(a.ID, a.Name, "service down")),
		msg(nous.ToolMessage(b.ID, b.Name, "noon")),
		unnamed,
		msg(nous.UserMessage("Thanks.")),
		msg(nous.SystemMessage("Be careful.")),
		msg(nous.UserMessage("One more.")),
	))
	golden(t, "tool_loop", send(t, c))
}

// Images and files: inline data or file data with their media types.
func TestContent(t *testing.T) {
	c := nous.NewContext()
	must(t, c.AddMessage(msg(nous.UserMessageParts(
		nous.TextPart("What are these?"),
		nous.ContentPart{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}},
		nous.ImageURLPart("data:image/jpeg;base64,/9j/4A=="),
		nous.ContentPart{Type: nous.PartFileURL, Content: "gs://bucket/a.pdf", Options: map[string]any{"media_type": "application/pdf"}},
	))))
	golden(t, "content", send(t, c))
}

// A response brought in and sent back gives the API the same parts: the
// thought with its signature, the text, the first parallel call with its
// signature and the second without; the usage counts thoughts as output.
func TestRoundTrip(t *testing.T) {
	const body = `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"Let me think.","thought":true,"thoughtSignature":"dGhvdWdodA=="},
	{"text":"Checking both."},
	{"functionCall":{"id":"fc_1","name":"weather","args":{"city":"Nice"}},"thoughtSignature":"c2lnLTE="},
	{"functionCall":{"name":"time","args":{}}}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":30,"thoughtsTokenCount":20,"cachedContentTokenCount":40,"toolUsePromptTokenCount":5},
	"modelVersion":"gemini-test"}`
	cl, _ := client(t, body)
	resp, err := cl.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("q"), nil)
	must(t, err)
	m, u, err := nousgemini.Message(resp)
	must(t, err)
	want := nous.Usage{Requests: 1, ToolCalls: 2, InputTokens: 105, OutputTokens: 50, TotalTokens: 155, CacheReadInputTokens: 40, ReasoningTokens: 20}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	if len(m.ToolCalls) != 2 || m.ToolCalls[1].ID == "" || m.ToolCalls[1].ID == m.ToolCalls[0].ID {
		t.Fatalf("tool calls %+v: the second needs an ID of its own", m.ToolCalls)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather and time in Nice?")), m,
		msg(nous.ToolMessage("fc_1", "weather", "sunny")), msg(nous.ToolMessage(m.ToolCalls[1].ID, "time", "noon"))))
	c = adapttest.RoundTrip(t, c) // as a store keeps it
	model, came, sent := modelTurn(t, c, 1, body)
	if len(model) != 4 {
		t.Fatalf("the model turn went back as %s", sent)
	}
	for k, p := range came {
		var x, y map[string]any
		must(t, json.Unmarshal(p, &x))
		must(t, json.Unmarshal(model[k], &y))
		if x["thoughtSignature"] != y["thoughtSignature"] || x["thought"] != y["thought"] || x["text"] != y["text"] {
			t.Errorf("part %d went back as %s, came as %s", k, model[k], p)
		}
	}
	var got struct {
		Contents []struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	must(t, json.Unmarshal(sent, &got))
	if len(got.Contents) != 3 || len(got.Contents[2].Parts) != 2 {
		t.Errorf("the two results are not one user content of two parts: %s", sent)
	}
}

// Views the API would refuse are an *Error naming the message and the
// call; config stays as it was.
func TestRefused(t *testing.T) {
	call := func(id string) nous.ToolCall { return nous.ToolCall{ID: id, Name: "f"} }
	badKept := nous.AssistantMessage("hi")
	badKept.Metadata = map[string]any{"gemini_part_order": []any{"text", "part:0"}, "gemini_parts": []any{`{"executableCode":`}}
	badSignature := nous.AssistantMessage("")
	badSignature.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png", "thought_signature": "!"}}}
	for _, tt := range append(viewgen.Broken(), []viewgen.Refused{
		{Name: "a kept part that is not JSON", View: []nous.Message{nous.UserMessage("q"), badKept}, Index: 1, Want: nousgemini.ErrUnsupported},
		{Name: "an image whose signature is not base64", View: []nous.Message{nous.UserMessage("q"), badSignature}, Index: 1, Want: nousgemini.ErrUnsupported},
		{Name: "an image URL without a media type", View: []nous.Message{nous.UserMessageParts(nous.ImageURLPart("https://example.com/a.png"))}, Want: nousgemini.ErrUnsupported},
		{Name: "an image in a tool result", View: []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", call("c1")),
			{Role: nous.RoleTool, ToolCallID: "c1", Name: "f", Parts: []nous.ContentPart{nous.ImageURLPart("https://example.com/a.png")}}}, Index: 2, CallID: "c1", Want: nousgemini.ErrUnsupported},
	}...) {
		t.Run(tt.Name, func(t *testing.T) {
			c := nous.NewContext(nous.WithSystemPrompt("s"))
			for _, m := range tt.View {
				must(t, c.AddMessage(m))
			}
			kept := &genai.Content{Parts: []*genai.Part{{Text: "kept"}}}
			config := &genai.GenerateContentConfig{SystemInstruction: kept}
			before := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "before"}}}}
			p := nousgemini.Params{Model: "m", Contents: before, Config: config}
			err := nousgemini.Fill(&p, c)
			var e *nousgemini.Error
			if !errors.As(err, &e) || !errors.Is(err, tt.Want) {
				t.Fatalf("Fill: %v, want an *Error wrapping %v", err, tt.Want)
			}
			if e.Provider != nousgemini.Provider || e.Index != tt.Index || e.CallID != tt.CallID {
				t.Errorf("Fill: %s, message %d, call %q; want gemini, message %d, call %q (%v)", e.Provider, e.Index, e.CallID, tt.Index, tt.CallID, err)
			}
			if p.Model != "m" || len(p.Contents) != 1 || p.Contents[0] != before[0] || p.Config != config || config.SystemInstruction != kept {
				t.Error("a refused Fill changed params")
			}
		})
	}
}

// modelTurn sends c and returns the parts of its content at index k, with
// the parts of the response body came.
func modelTurn(t *testing.T, c *nous.Context, k int, came string) (sent, original []json.RawMessage, body []byte) {
	t.Helper()
	body = send(t, c)
	var got struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	must(t, json.Unmarshal(body, &got))
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	must(t, json.Unmarshal([]byte(came), &resp))
	if len(got.Contents) <= k || got.Contents[k].Role != "model" {
		t.Fatalf("no model turn at %d: %s", k, body)
	}
	return got.Contents[k].Parts, resp.Candidates[0].Content.Parts, body
}

// sameParts checks that the parts sent are those that came, part for part.
func sameParts(t *testing.T, sent, came []json.RawMessage, body []byte) {
	t.Helper()
	if len(sent) != len(came) {
		t.Fatalf("the model turn went back as %s", body)
	}
	for k := range came {
		if !adapttest.SameJSON(t, sent[k], came[k]) {
			t.Errorf("part %d went back as %s, came as %s", k, sent[k], came[k])
		}
	}
}

// receive decodes a response body through the SDK, as a client gets it.
func receive(t *testing.T, body string) nous.Message {
	t.Helper()
	cl, _ := client(t, body)
	resp, err := cl.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("q"), nil)
	must(t, err)
	m, _, err := nousgemini.Message(resp)
	must(t, err)
	return m
}

// An image model's answer: thoughts, a thought image, text and the image
// made, signed. The image is an image part of the message, readable by any
// runtime; every part goes back in its place with its signature, byte for
// byte, after a JSON round trip of the context, so the next turn can edit
// the image.
func TestImageOutput(t *testing.T) {
	const body = `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"Drafting a composition.","thought":true},
	{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgoAAAA="},"thought":true},
	{"text":"Here is your cat.","thoughtSignature":"c2lnLXRleHQ="},
	{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgoBBBA="},"thoughtSignature":"c2lnLWltYWdl"},
	{"fileData":{"mimeType":"video/mp4","fileUri":"https://example.com/v.mp4"}}]},"finishReason":"STOP"}],
	"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":1290},"modelVersion":"gemini-test-image"}`
	m := receive(t, body)
	var images []nous.ContentPart
	for _, p := range m.Parts {
		if p.Type == nous.PartImage || p.Type == nous.PartFileURL {
			images = append(images, p)
		}
	}
	if len(images) != 2 || images[0].Content != "iVBORw0KGgoBBBA=" || images[0].Options["media_type"] != "image/png" ||
		images[1].Content != "https://example.com/v.mp4" {
		t.Fatalf("the media made are not parts of the message: %+v", m.Parts)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), m, msg(nous.UserMessage("Make it orange."))))
	sent, original, out := modelTurn(t, adapttest.RoundTrip(t, c), 1, body)
	sameParts(t, sent, original, out)
	golden(t, "image_output", out)
}

// Code the model ran and its result go back between the texts around them.
func TestCodeExecution(t *testing.T) {
	const body = `{"candidates":[{"content":{"role":"model","parts":[
	{"text":"Computing."},
	{"executableCode":{"language":"PYTHON","code":"print(2**10)"}},
	{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1024\n"}},
	{"text":"It is 1024."}]},"finishReason":"STOP"}],"modelVersion":"gemini-test"}`
	m := receive(t, body)
	if got := m.Text(); got != "Computing.It is 1024." {
		t.Errorf("text %q", got)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("2^10?")), m, msg(nous.UserMessage("Thanks."))))
	sent, original, out := modelTurn(t, adapttest.RoundTrip(t, c), 1, body)
	sameParts(t, sent, original, out)
}

// An assistant message a runtime made with an image (no order recorded)
// sends it as inline data in the model turn, after the text.
func TestAssistantImage(t *testing.T) {
	a := msg(nous.AssistantMessage("Here it is."))
	a.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw.")), a, msg(nous.UserMessage("Again."))))
	sent, _, out := modelTurn(t, c, 1, `{"candidates":[{"content":{"parts":[]}}]}`)
	if len(sent) != 2 || !adapttest.SameJSON(t, sent[1], []byte(`{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}`)) {
		t.Errorf("the model turn went as %s", out)
	}
}

// decodeResp decodes a GenerateContent body through the SDK against a fake.
func decodeResp(t *testing.T, body string) *genai.GenerateContentResponse {
	t.Helper()
	cl, _ := client(t, body)
	resp, err := cl.Models.GenerateContent(context.Background(), "gemini-test", genai.Text("q"), nil)
	must(t, err)
	return resp
}
