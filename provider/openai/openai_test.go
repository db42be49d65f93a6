package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/viewgen"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies in testdata/")

const (
	chatText = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop",
"message":{"role":"assistant","content":"ok","refusal":null}}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`
	responseText = `{"id":"resp_1","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[
{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}],
"usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`
)

// client returns a client of a fake API answering responses in turn, and
// a canned one for the path after.
func client(t *testing.T, responses ...string) (openai.Client, *adapttest.Fake) {
	t.Helper()
	for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"} {
		t.Setenv(v, "")
	}
	def := func(path string) string {
		if strings.HasSuffix(path, "/responses") {
			return responseText
		}
		return chatText
	}
	f, url := adapttest.Serve(t, def, responses...)
	return openai.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0)), f
}

// sendChat and sendResponses fill a request from c, send it to a fake API
// and return the body the SDK sent.
func sendChat(t *testing.T, c *nous.Context) []byte {
	t.Helper()
	cl, f := client(t)
	params := openai.ChatCompletionNewParams{Model: "gpt-test"}
	must(t, nousopenai.FillChat(&params, c))
	_, err := cl.Chat.Completions.New(context.Background(), params)
	must(t, err)
	return f.Bodies[0]
}

func sendResponses(t *testing.T, c *nous.Context) []byte {
	t.Helper()
	return sendResponsesWith(t, c, responses.ResponseNewParams{})
}

// sendResponsesWith is sendResponses of a request with params.
func sendResponsesWith(t *testing.T, c *nous.Context, params responses.ResponseNewParams) []byte {
	t.Helper()
	cl, f := client(t)
	params.Model = "gpt-test"
	must(t, nousopenai.FillResponses(&params, c))
	_, err := cl.Responses.New(context.Background(), params)
	must(t, err)
	return f.Bodies[0]
}

func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	adapttest.Golden(t, *update, name, body)
}

var must = adapttest.Must

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func msg(m nous.Message) nous.Message { m.CreatedAt = at; return m }

// toolLoop is a view with a bit of everything both APIs take: the system
// prompt repeated as the leading system message, the overlay, parallel
// calls (one with empty arguments) answered by role:tool messages (one
// failed, one empty), thinking of another provider, blank text, a system
// message later on, an image.
func toolLoop(t *testing.T) *nous.Context {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	c.SetSystemPromptOverlay("Answer in French.")
	a, b := nous.ToolCall{ID: "call_a", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		nous.ToolCall{ID: "call_b", Name: "time"}
	assistant := msg(nous.AssistantMessage("Checking both.", a, b))
	foreign := nous.ThinkingPart("thought elsewhere", "sig")
	foreign.Options["provider"] = "anthropic"
	assistant.Parts = []nous.ContentPart{foreign}
	assistant.ReasoningContent = "plain reasoning"
	image := nous.ContentPart{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}
	must(t, c.AddMessages(
		msg(nous.SystemMessage("You are terse.")),
		msg(nous.UserMessage("Weather and time in Paris?")),
		assistant,
		msg(nous.ToolErrorMessage(a.ID, a.Name, "service down")),
		msg(nous.ToolMessage(b.ID, b.Name, "")),
		msg(nous.SystemMessage("Be careful.")),
		msg(nous.UserMessageParts(nous.TextPart("  "), nous.TextPart("And this?"), image)),
		msg(nous.AssistantMessage("  ")),
	))
	return c
}

func TestChatToolLoop(t *testing.T) { golden(t, "chat_tool_loop", sendChat(t, toolLoop(t))) }

func TestResponsesToolLoop(t *testing.T) {
	golden(t, "responses_tool_loop", sendResponses(t, toolLoop(t)))
}

// Files: Chat takes a file's data, Responses its data or URL.
func TestFiles(t *testing.T) {
	pdf := nous.ContentPart{Type: nous.PartFile, Content: "JVBERi0=", Options: map[string]any{"media_type": "application/pdf", "filename": "a.pdf"}}
	c := nous.NewContext()
	must(t, c.AddMessage(msg(nous.UserMessageParts(nous.TextPart("Read it."), pdf, nous.ImageURLPart("https://example.com/a.png")))))
	golden(t, "chat_files", sendChat(t, c))
	must(t, c.AddMessage(msg(nous.UserMessageParts(nous.ContentPart{Type: nous.PartFileURL, Content: "https://example.com/b.pdf"}))))
	golden(t, "responses_files", sendResponses(t, c))
}

// A Chat response comes in with its text, calls and argument bytes, and
// its usage counts cached and reasoning tokens in the totals.
func TestChatResponse(t *testing.T) {
	const body = `{"id":"c2","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
	"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[
	{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"z\":1,\"city\":\"Nice\"}"}},
	{"id":"call_2","type":"function","function":{"name":"time","arguments":""}}]}}],
	"usage":{"prompt_tokens":100,"completion_tokens":40,"total_tokens":140,"prompt_tokens_details":{"cached_tokens":60},"completion_tokens_details":{"reasoning_tokens":25}}}`
	var resp openai.ChatCompletion
	must(t, json.Unmarshal([]byte(body), &resp))
	m, u, err := nousopenai.ChatMessage(&resp)
	must(t, err)
	want := nous.Usage{Requests: 1, ToolCalls: 2, InputTokens: 100, OutputTokens: 40, TotalTokens: 140, CacheReadInputTokens: 60, ReasoningTokens: 25}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	if len(m.ToolCalls) != 2 || string(m.ToolCalls[0].Arguments) != `{"z":1,"city":"Nice"}` || string(m.ToolCalls[1].Arguments) != "{}" {
		t.Fatalf("tool calls %+v", m.ToolCalls)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), m, msg(nous.ToolMessage("call_1", "weather", "sunny")), msg(nous.ToolMessage("call_2", "time", "noon"))))
	sent := sendChat(t, c)
	if !bytes.Contains(sent, []byte(`"arguments":"{\"z\":1,\"city\":\"Nice\"}"`)) {
		t.Errorf("the arguments' bytes changed: %s", sent)
	}
	var none openai.ChatCompletion
	if _, _, err := nousopenai.ChatMessage(&none); !errors.Is(err, nousopenai.ErrNoChoice) {
		t.Errorf("a response without a choice: %v", err)
	}
}

// A Responses response brought in and sent back gives the API the same
// items: each reasoning item, with its encrypted content, directly before
// the item that followed it, the message and the calls with their IDs and
// argument bytes. A reasoning item whose follower is gone is dropped.
func TestResponsesRoundTrip(t *testing.T) {
	const body = `{"id":"resp_2","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[
	{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look it up."}],"encrypted_content":"gAAAA1"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Checking.","annotations":[]}]},
	{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAA2"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":"{\"z\":1,\"city\":\"Nice\"}","status":"completed"}],
	"usage":{"input_tokens":200,"output_tokens":80,"total_tokens":280,"input_tokens_details":{"cached_tokens":150},"output_tokens_details":{"reasoning_tokens":64}}}`
	var resp responses.Response
	must(t, json.Unmarshal([]byte(body), &resp))
	m, u := read(t, &resp)
	want := nous.Usage{Requests: 1, ToolCalls: 1, InputTokens: 200, OutputTokens: 80, TotalTokens: 280, CacheReadInputTokens: 150, ReasoningTokens: 64}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Nice?")), m, msg(nous.ToolMessage("call_1", "weather", "sunny"))))
	c = adapttest.RoundTrip(t, c) // as a store keeps it
	sent := sendResponses(t, c)
	var got struct {
		Input []json.RawMessage `json:"input"`
	}
	must(t, json.Unmarshal(sent, &got))
	var original struct {
		Output []map[string]any `json:"output"`
	}
	must(t, json.Unmarshal([]byte(body), &original))
	if len(got.Input) != 6 { // user, rs_1, msg_1, rs_2, fc_1, output
		t.Fatalf("sent %d items: %s", len(got.Input), sent)
	}
	for k, o := range original.Output {
		var item map[string]any
		must(t, json.Unmarshal(got.Input[1+k], &item))
		if item["type"] != o["type"] || item["id"] != o["id"] || item["encrypted_content"] != o["encrypted_content"] || item["arguments"] != o["arguments"] {
			t.Errorf("item %d went back as %s, came as %v", k, got.Input[1+k], o)
		}
	}
	golden(t, "responses_round_trip", sent)

	// Without the call rs_2 preceded, rs_2 goes too; rs_1 stays before
	// the message.
	m.ToolCalls = nil
	c = nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Nice?")), m))
	sent = sendResponses(t, c)
	if bytes.Contains(sent, []byte("rs_2")) || !bytes.Contains(sent, []byte("rs_1")) {
		t.Errorf("a reasoning item without its follower was sent, or one with it was not: %s", sent)
	}
}

// Views the APIs would refuse are an *Error naming the message and the
// call, wrapping the sentinel of what is wrong; params stays as it was.
func TestRefused(t *testing.T) {
	call := func(id string) nous.ToolCall { return nous.ToolCall{ID: id, Name: "f"} }
	type refusedView struct {
		viewgen.Refused
		responses bool // Responses takes it
	}
	cases := []refusedView{
		{viewgen.Refused{Name: "a file URL in Chat", View: []nous.Message{nous.UserMessageParts(nous.ContentPart{Type: nous.PartFileURL, Content: "https://example.com/a.pdf"})},
			Want: nousopenai.ErrUnsupported}, true},
		{viewgen.Refused{Name: "an image in a Chat tool result", View: []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", call("c1")),
			{Role: nous.RoleTool, ToolCallID: "c1", Name: "f", Parts: []nous.ContentPart{nous.ImageURLPart("https://example.com/a.png")}}},
			Index: 2, CallID: "c1", Want: nousopenai.ErrUnsupported}, true},
		{viewgen.Refused{Name: "an image without a media type", View: []nous.Message{nous.UserMessageParts(nous.ContentPart{Type: nous.PartImage, Content: "R0lG"})},
			Want: nousopenai.ErrUnsupported}, false},
	}
	for _, b := range viewgen.Broken() {
		cases = append(cases, refusedView{Refused: b})
	}
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			c := nous.NewContext()
			for _, m := range tt.View {
				must(t, c.AddMessage(m))
			}
			kept := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("kept")}
			chat := openai.ChatCompletionNewParams{Messages: kept}
			refused(t, "FillChat", nousopenai.FillChat(&chat, c), tt.Want, tt.Index, tt.CallID)
			if len(chat.Messages) != 1 {
				t.Error("a refused FillChat changed params")
			}
			var params responses.ResponseNewParams
			err := nousopenai.FillResponses(&params, c)
			if tt.responses {
				must(t, err)
				return
			}
			refused(t, "FillResponses", err, tt.Want, tt.Index, tt.CallID)
			if params.Input.OfInputItemList != nil {
				t.Error("a refused FillResponses changed params")
			}
		})
	}
}

func refused(t *testing.T, what string, err, want error, index int, callID string) {
	t.Helper()
	var e *nousopenai.Error
	if !errors.As(err, &e) || !errors.Is(err, want) {
		t.Fatalf("%s: %v, want an *Error wrapping %v", what, err, want)
	}
	if e.Index != index || e.CallID != callID {
		t.Errorf("%s: message %d, call %q; want message %d, call %q (%v)", what, e.Index, e.CallID, index, callID, err)
	}
}

// An image another provider's model made, in an assistant message, is
// dropped from its turn (which takes text only); one of unknown origin is
// refused.
func TestForeignImageDropped(t *testing.T) {
	made := msg(nous.AssistantMessage("Here is your cat."))
	made.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=",
		Options: map[string]any{"provider": "gemini", "media_type": "image/png", "thought_signature": "c2ln"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), made, msg(nous.UserMessage("Thanks."))))
	for name, body := range map[string][]byte{"chat": sendChat(t, c), "responses": sendResponses(t, c)} {
		if bytes.Contains(body, []byte("iVBORw0KGgo")) || !bytes.Contains(body, []byte("Here is your cat.")) {
			t.Errorf("%s: sent %s", name, body)
		}
	}
	delete(made.Parts[0].Options, "provider")
	c = nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), made))
	if err := nousopenai.FillChat(&openai.ChatCompletionNewParams{}, c); !errors.Is(err, nousopenai.ErrUnsupported) {
		t.Errorf("FillChat: %v, want ErrUnsupported", err)
	}
	if err := nousopenai.FillResponses(&responses.ResponseNewParams{}, c); !errors.Is(err, nousopenai.ErrUnsupported) {
		t.Errorf("FillResponses: %v, want ErrUnsupported", err)
	}
}

// An image the Responses API made is an image part of the message (readable
// by any runtime), and goes back as its image_generation_call item, after
// the reasoning that preceded it and before the text that followed; Chat,
// whose assistant turns hold text only, drops it.
func TestResponsesImageGeneration(t *testing.T) {
	const body = `{"id":"resp_3","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[
	{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA1"},
	{"type":"image_generation_call","id":"ig_1","status":"completed","result":"UklGRg==","output_format":"webp","revised_prompt":"an orange cat","size":"1024x1024"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Here it is.","annotations":[]}]}],
	"usage":{"input_tokens":20,"output_tokens":1000,"total_tokens":1020}}`
	var resp responses.Response
	must(t, json.Unmarshal([]byte(body), &resp))
	m, _ := read(t, &resp)
	var image *nous.ContentPart
	for i := range m.Parts {
		if m.Parts[i].Type == nous.PartImage {
			image = &m.Parts[i]
		}
	}
	if image == nil || image.Content != "UklGRg==" || image.Options["media_type"] != "image/webp" {
		t.Fatalf("the image is not a part of the message: %+v", m.Parts)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), m, msg(nous.UserMessage("Make it orange."))))
	c = adapttest.RoundTrip(t, c)
	sent := sendResponses(t, c)
	var got struct {
		Input []map[string]any `json:"input"`
	}
	must(t, json.Unmarshal(sent, &got))
	var types []string
	for _, it := range got.Input {
		types = append(types, fmt.Sprint(it["type"], ":", it["id"]))
	}
	if want := "<nil>:<nil> reasoning:rs_1 image_generation_call:ig_1 message:msg_1 <nil>:<nil>"; strings.Join(types, " ") != want {
		t.Errorf("items %v, want %s", types, want)
	}
	if ig := got.Input[2]; ig["result"] != "UklGRg==" || ig["status"] != "completed" {
		t.Errorf("the image went back as %v", ig)
	}
	golden(t, "responses_image", sent)
	if chat := sendChat(t, c); bytes.Contains(chat, []byte("UklGRg")) || !bytes.Contains(chat, []byte("Here it is.")) {
		t.Errorf("chat: %s", chat)
	}
}

func responseOf(t *testing.T, output string) *responses.Response {
	t.Helper()
	var resp responses.Response
	must(t, json.Unmarshal([]byte(`{"id":"resp_x","object":"response","created_at":1,"model":"gpt-test","status":"completed","output":[`+output+`],
	"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`), &resp))
	return &resp
}

// read returns the message and usage ResponseMessage makes of resp, which
// it must take.
func read(t *testing.T, resp *responses.Response) (nous.Message, nous.Usage) {
	t.Helper()
	m, u, err := nousopenai.ResponseMessage(resp)
	must(t, err)
	return m, u
}

// inputItems returns the input items of a Responses request body.
func inputItems(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var got struct {
		Input []map[string]any `json:"input"`
	}
	must(t, json.Unmarshal(body, &got))
	return got.Input
}

// itemIDs returns "type:id" of each input item of a Responses body.
func itemIDs(t *testing.T, body []byte) []string {
	var out []string
	for _, it := range inputItems(t, body) {
		out = append(out, fmt.Sprint(it["type"], ":", it["id"]))
	}
	return out
}

// ChatMessage and ResponseMessage of a nil response are errors wrapping
// ErrNoResponse, not a panic.
func TestNilResponses(t *testing.T) {
	_, u, err := nousopenai.ChatMessage(nil)
	if !errors.Is(err, nousopenai.ErrNoResponse) || u != (nous.Usage{}) {
		t.Errorf("ChatMessage(nil): %v, usage %+v", err, u)
	}
	_, u, err = nousopenai.ResponseMessage(nil)
	if !errors.Is(err, nousopenai.ErrNoResponse) || u != (nous.Usage{}) {
		t.Errorf("ResponseMessage(nil): %v, usage %+v", err, u)
	}
}

// A Responses API response whose status is "failed" is an error wrapping
// ErrFailed that quotes the API's error, returned with the usage billed;
// one whose status is "incomplete" is a message of what it made, with the
// reason it stopped.
func TestResponseStatus(t *testing.T) {
	var failed responses.Response
	must(t, json.Unmarshal([]byte(`{"id":"resp_f","object":"response","created_at":1,"model":"gpt-test","status":"failed",
	"error":{"code":"server_error","message":"The model failed."},"output":[],
	"usage":{"input_tokens":120,"output_tokens":0,"total_tokens":120}}`), &failed))
	m, u, err := nousopenai.ResponseMessage(&failed)
	if !errors.Is(err, nousopenai.ErrFailed) || !strings.Contains(err.Error(), "The model failed.") {
		t.Errorf("a failed response: %v", err)
	}
	if u.Requests != 1 || u.InputTokens != 120 || len(m.Parts)+len(m.Content)+len(m.ToolCalls) != 0 {
		t.Errorf("a failed response gave %+v, usage %+v", m, u)
	}
	var incomplete responses.Response
	must(t, json.Unmarshal([]byte(`{"id":"resp_i","object":"response","created_at":1,"model":"gpt-test","status":"incomplete",
	"incomplete_details":{"reason":"max_output_tokens"},"output":[
	{"type":"message","id":"msg_1","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"The answer is","annotations":[]}]}],
	"usage":{"input_tokens":10,"output_tokens":4096,"total_tokens":4106}}`), &incomplete))
	m, u = read(t, &incomplete)
	if m.Content != "The answer is" || m.Metadata[nousopenai.MetadataIncompleteReason] != "max_output_tokens" || u.OutputTokens != 4096 {
		t.Errorf("an incomplete response gave %+v, usage %+v", m, u)
	}
}
