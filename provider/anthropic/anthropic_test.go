package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/viewgen"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies in testdata/")

const cannedText = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"ok"}],
"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`

// client returns a client of a fake API answering responses in turn.
func client(t *testing.T, responses ...string) (anthropic.Client, *adapttest.Fake) {
	t.Helper()
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"} {
		t.Setenv(v, "")
	}
	f, url := adapttest.Serve(t, func(string) string { return cannedText }, responses...)
	return anthropic.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0)), f
}

// send fills a request from c, sends it to a fake API and returns the body
// the SDK sent.
func send(t *testing.T, c *nous.Context) []byte {
	t.Helper()
	return sendWith(t, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024}, c)
}

// sendWith is send with params, a copy of which it fills.
func sendWith(t *testing.T, params anthropic.MessageNewParams, c *nous.Context) []byte {
	t.Helper()
	cl, f := client(t)
	must(t, nousanthropic.Fill(&params, c))
	_, err := cl.Messages.New(context.Background(), params)
	must(t, err)
	return f.Bodies[0]
}

func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	adapttest.Golden(t, *update, name, body)
}

var must, sameJSON = adapttest.Must, adapttest.SameJSON

// at is a fixed time, so that contexts do not differ by their clocks.
var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func msg(m nous.Message) nous.Message { m.CreatedAt = at; return m }

// signed is a thinking part as Message makes it from a response.
func signed(t *testing.T, text, signature string) nous.ContentPart {
	t.Helper()
	resp := decode(t, `{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"thinking","thinking":`+quote(text)+`,"signature":`+quote(signature)+`}],"usage":{}}`)
	m, _, _ := nousanthropic.Message(resp)
	return m.Parts[0]
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// decode decodes a response body as the SDK does.
func decode(t *testing.T, body string) *anthropic.Message {
	t.Helper()
	var m anthropic.Message
	must(t, json.Unmarshal([]byte(body), &m))
	return &m
}

// A tool loop: the system prompt and its overlay, thinking first in the
// assistant turn, parallel calls answered in one user message with the
// results first (one failed, one empty), then the user's next text.
func TestToolLoop(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	c.SetSystemPromptOverlay("Answer in French.")
	a, b := nous.ToolCall{ID: "toolu_a", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		nous.ToolCall{ID: "toolu_b", Name: "time", Arguments: nil}
	assistant := msg(nous.AssistantMessage("Checking both.", a, b))
	assistant.Parts = []nous.ContentPart{signed(t, "The user wants weather and time.", "sig-abc==")}
	must(t, c.AddMessages(
		msg(nous.UserMessage("Weather and time in Paris?")),
		assistant,
		msg(nous.ToolErrorMessage(a.ID, a.Name, "service down")),
		msg(nous.ToolMessage(b.ID, b.Name, "")),
		msg(nous.UserMessage("Also, hello.")),
	))
	golden(t, "tool_loop", send(t, c))
}

// Content: blank text is never sent; images and files map to image and
// document blocks; a system message in the middle keeps its place, a
// system message among the messages.
func TestContent(t *testing.T) {
	c := nous.NewContext()
	image := nous.ContentPart{Type: nous.PartImage, Content: "iVBORw0KGgo=", Options: map[string]any{"media_type": "image/png"}}
	pdf := nous.ContentPart{Type: nous.PartFile, Content: "JVBERi0=", Options: map[string]any{"media_type": "application/pdf"}}
	text := nous.ContentPart{Type: nous.PartFile, Content: "aGVsbG8=", Options: map[string]any{"media_type": "text/plain"}}
	user := msg(nous.UserMessageParts(nous.TextPart("  "), image, nous.ImageURLPart("https://example.com/a.png"),
		nous.ImageURLPart("data:image/jpeg;base64,/9j/4A=="), pdf, text,
		nous.ContentPart{Type: nous.PartFileURL, Content: "https://example.com/a.pdf"}, nous.TextPart("What are these?")))
	user.Content = " \n\t"
	must(t, c.AddMessages(user, msg(nous.AssistantMessage("   ")), msg(nous.SystemMessage("Be careful.")), msg(nous.UserMessage("Go on."))))
	golden(t, "content", send(t, c))
}

// Thinking that did not come from Anthropic, thinking without a signature
// and plain reasoning text are not sent; a leading system message that is
// the system prompt is sent once; empty arguments are {}.
func TestThinkingNotOurs(t *testing.T) {
	c := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	foreign := nous.ThinkingPart("from elsewhere", "sig-of-another")
	foreign.Options["provider"] = "gemini"
	assistant := msg(nous.AssistantMessage("", nous.ToolCall{ID: "t1", Name: "f"}))
	assistant.Parts = []nous.ContentPart{foreign, nous.ThinkingPart("unsigned", "")}
	assistant.ReasoningContent = "plain reasoning"
	must(t, c.AddMessages(msg(nous.SystemMessage("Be brief.")), msg(nous.UserMessage("Hi")), assistant, msg(nous.ToolMessage("t1", "f", "done"))))
	golden(t, "thinking_not_ours", send(t, c))
}

// A response brought in and sent back gives the API the same blocks:
// thinking with its signature, redacted thinking with its data, text, and
// tool input bytes, in order; the usage counts every prompt token.
func TestRoundTrip(t *testing.T) {
	const response = `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"thinking","thinking":"Need the weather.\nThen answer.","signature":"EqQBCkYIARgCIkA+/=="},
	{"type":"redacted_thinking","data":"RW5jcnlwdGVk"},
	{"type":"text","text":"Let me check."},
	{"type":"tool_use","id":"toolu_1","name":"weather","input":{"z":1,"a":[1,2],"city":"Nice"}}],
	"usage":{"input_tokens":100,"output_tokens":50,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens_details":{"thinking_tokens":40}}}`
	resp := decode(t, response)
	m, u, err := nousanthropic.Message(resp)
	must(t, err)
	want := nous.Usage{Requests: 1, ToolCalls: 1, InputTokens: 150, OutputTokens: 50, TotalTokens: 200,
		CacheCreationInputTokens: 20, CacheReadInputTokens: 30, ReasoningTokens: 40}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Nice?")), m, msg(nous.ToolMessage("toolu_1", "weather", "sunny"))))
	c = adapttest.RoundTrip(t, c) // as a store keeps it
	body := send(t, c)
	sameBlocks(t, body, 1, response)
	if !bytes.Contains(body, []byte(`{"z":1,"a":[1,2],"city":"Nice"}`)) {
		t.Errorf("the tool input's bytes changed: %s", body)
	}
	golden(t, "round_trip", body)
}

// sameBlocks checks that message k of the request body is the assistant
// turn of response, block for block.
func sameBlocks(t *testing.T, body []byte, k int, response string) {
	t.Helper()
	var sent struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	must(t, json.Unmarshal(body, &sent))
	var original struct {
		Content []json.RawMessage `json:"content"`
	}
	must(t, json.Unmarshal([]byte(response), &original))
	if len(sent.Messages) <= k || sent.Messages[k].Role != "assistant" || len(sent.Messages[k].Content) != len(original.Content) {
		t.Fatalf("the assistant turn went back as %s", body)
	}
	for i, b := range sent.Messages[k].Content {
		if !sameJSON(t, b, original.Content[i]) {
			t.Errorf("block %d went back as %s, came as %s", i, b, original.Content[i])
		}
	}
}

// Views the API would refuse are an *Error naming the message and the
// call, wrapping the sentinel of what is wrong, and params stays as it was.
func TestRefused(t *testing.T) {
	call := func(id string) nous.ToolCall { return nous.ToolCall{ID: id, Name: "f"} }
	edited := signed(t, "original thinking", "sig")
	edited.Content = "edited thinking"
	withEdited := msg(nous.AssistantMessage("", call("e1")))
	withEdited.Parts = []nous.ContentPart{edited}
	userThinking := msg(nous.UserMessageParts(signed(t, "mine", "sig")))
	badBlock := msg(nous.AssistantMessage("hi"))
	badBlock.Metadata = map[string]any{"anthropic_block_order": []any{"text", "block:0"}, "anthropic_blocks": []any{`{"type":`}}
	badCitations := msg(nous.AssistantMessage(""))
	badCitations.Parts = []nous.ContentPart{{Type: nous.PartText, Content: "cited", Options: map[string]any{"provider": "anthropic", "citations": "[{"}}}
	for _, tt := range append(viewgen.Broken(), []viewgen.Refused{
		{Name: "edited thinking", View: []nous.Message{nous.UserMessage("q"), withEdited, nous.ToolMessage("e1", "f", "1")}, Index: 1, Want: nousanthropic.ErrEditedThinking},
		{Name: "thinking in a user message", View: []nous.Message{userThinking}, Want: nousanthropic.ErrUnsupported},
		{Name: "a kept block that is not JSON", View: []nous.Message{nous.UserMessage("q"), badBlock}, Index: 1, Want: nousanthropic.ErrUnsupported},
		{Name: "citations that are not JSON", View: []nous.Message{nous.UserMessage("q"), badCitations}, Index: 1, Want: nousanthropic.ErrUnsupported},
		{Name: "a GIF file", View: []nous.Message{nous.UserMessageParts(nous.ContentPart{Type: nous.PartFile, Content: "R0lG", Options: map[string]any{"media_type": "image/gif"}})}, Want: nousanthropic.ErrUnsupported},
		{Name: "an image without a media type", View: []nous.Message{nous.UserMessageParts(nous.ContentPart{Type: nous.PartImage, Content: "R0lG"})}, Want: nousanthropic.ErrUnsupported},
	}...) {
		t.Run(tt.Name, func(t *testing.T) {
			c := nous.NewContext()
			for _, m := range tt.View {
				if err := c.AddMessage(m); err != nil {
					t.Fatal(err)
				}
			}
			params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("kept"))},
				Thinking: adaptive(), OutputConfig: anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffortMax}}
			err := nousanthropic.Fill(&params, c)
			var e *nousanthropic.Error
			if !errors.As(err, &e) || !errors.Is(err, tt.Want) {
				t.Fatalf("Fill: %v, want an *Error wrapping %v", err, tt.Want)
			}
			if e.Index != tt.Index || e.CallID != tt.CallID {
				t.Errorf("Fill: message %d, call %q; want message %d, call %q (%v)", e.Index, e.CallID, tt.Index, tt.CallID, err)
			}
			if len(params.Messages) != 1 || params.System != nil || params.Thinking.OfAdaptive == nil || params.OutputConfig.Effort != anthropic.OutputConfigEffortMax {
				t.Error("a refused Fill changed params")
			}
		})
	}
}

// The blocks of server tools (a web search, code execution, a block type
// newer than the SDK) and text with citations go back as they came, in
// their order, also after a JSON round trip of the context; the text stays
// readable as the message's text.
func TestServerTools(t *testing.T) {
	const response = `{"id":"msg_s","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","content":[
	{"type":"text","text":"I'll search for that."},
	{"type":"server_tool_use","id":"srvtoolu_01WYG3","name":"web_search","input":{"query":"claude shannon birth date"}},
	{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01WYG3","content":[{"type":"web_search_result","url":"https://en.wikipedia.org/wiki/Claude_Shannon","title":"Claude Shannon - Wikipedia","encrypted_content":"EqgfCioIARgBIiQ3YTAw\u0000==","page_age":"April 30, 2025"}]},
	{"type":"text","text":"Based on the search results, "},
	{"type":"text","text":"Claude Shannon was born on April 30, 1916.","citations":[{"type":"web_search_result_location","url":"https://en.wikipedia.org/wiki/Claude_Shannon","title":"Claude Shannon - Wikipedia","encrypted_index":"Eo8BCioIAhgB","cited_text":"Claude Elwood Shannon (April 30, 1916 – February 24, 2001) was..."}]},
	{"type":"server_tool_use","id":"srvtoolu_02","name":"code_execution","input":{"code":"print(2**64)"}},
	{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_02","content":{"type":"code_execution_result","stdout":"18446744073709551616\n","stderr":"","return_code":0,"content":[]}},
	{"type":"future_block","id":"fb_1","payload":{"n":18446744073709551615,"s":"x"}}],
	"usage":{"input_tokens":6039,"output_tokens":931,"server_tool_use":{"web_search_requests":1}}}`
	m, u, err := nousanthropic.Message(decode(t, response))
	must(t, err)
	if u.ToolCalls != 0 || len(m.ToolCalls) != 0 {
		t.Errorf("server tool use counted as tool calls: %+v, %v", u, m.ToolCalls)
	}
	if got, want := m.Text(), "I'll search for that.Based on the search results, Claude Shannon was born on April 30, 1916."; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("When was Claude Shannon born?")), m, msg(nous.UserMessage("Thanks."))))
	c = adapttest.RoundTrip(t, c)
	body := send(t, c)
	if len(sentOf(t, body).Messages) != 3 {
		t.Fatalf("sent %s", body)
	}
	sameBlocks(t, body, 1, response)
	golden(t, "server_tools", body)
}

// A turn the API paused in a server tool (stop_reason "pause_turn") is sent
// back as the last message, as it came, for the API to go on with it.
func TestPauseTurn(t *testing.T) {
	const response = `{"id":"msg_p","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"thinking","thinking":"Search twice.","signature":"sigP"},
	{"type":"server_tool_use","id":"srvtoolu_p","name":"web_search","input":{"query":"q"}}],
	"usage":{"input_tokens":1,"output_tokens":1}}`
	m, _, _ := nousanthropic.Message(decode(t, response))
	if m.Metadata["stop_reason"] != "pause_turn" {
		t.Errorf("stop_reason %v", m.Metadata["stop_reason"])
	}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Look it up.")), m))
	s := sentOf(t, send(t, adapttest.RoundTrip(t, c)))
	if len(s.Messages) != 2 || s.Messages[1].Role != "assistant" {
		t.Fatalf("sent %+v", s.Messages)
	}
	if got := strings.Join(types(s.Messages[1].Content), ","); got != "thinking,server_tool_use" {
		t.Errorf("the paused turn went back as %s", got)
	}
}

// An image another provider's model made, in an assistant message, is
// dropped from its turn (which has no image block); one of unknown origin
// is refused.
func TestForeignImageDropped(t *testing.T) {
	made := msg(nous.AssistantMessage("Here is your cat."))
	made.Parts = []nous.ContentPart{{Type: nous.PartImage, Content: "iVBORw0KGgo=",
		Options: map[string]any{"provider": "gemini", "media_type": "image/png", "thought_signature": "c2ln"}}}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), made, msg(nous.UserMessage("Thanks."))))
	body := send(t, c)
	if bytes.Contains(body, []byte("iVBORw0KGgo")) || !bytes.Contains(body, []byte("Here is your cat.")) {
		t.Errorf("sent %s", body)
	}
	delete(made.Parts[0].Options, "provider")
	c = nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Draw a cat.")), made))
	if err := nousanthropic.Fill(&anthropic.MessageNewParams{}, c); !errors.Is(err, nousanthropic.ErrUnsupported) {
		t.Errorf("Fill: %v, want ErrUnsupported", err)
	}
}

type sentBody struct {
	System   []map[string]any `json:"system"`
	Messages []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
}

func sentOf(t *testing.T, body []byte) sentBody {
	var s sentBody
	must(t, json.Unmarshal(body, &s))
	return s
}

func types(blocks []map[string]any) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b["type"].(string))
	}
	return out
}

// Message of a nil response is an error wrapping ErrNoResponse, not a
// panic.
func TestMessageOfNil(t *testing.T) {
	m, u, err := nousanthropic.Message(nil)
	if !errors.Is(err, nousanthropic.ErrNoResponse) || u != (nous.Usage{}) || m.Role != "" {
		t.Errorf("Message(nil) = %+v, %+v, %v; want an error wrapping ErrNoResponse", m, u, err)
	}
}

// A part ThinkingPart makes of a thinking block's text and signature (a
// runtime that recorded the block itself) is the part Message makes of the
// block, and goes back as the block; its text edited, it is refused.
func TestThinkingPart(t *testing.T) {
	p := nousanthropic.ThinkingPart("Need the weather.", "EqQBCkYIARgC")
	if want := signed(t, "Need the weather.", "EqQBCkYIARgC"); !reflect.DeepEqual(p, want) {
		t.Errorf("ThinkingPart = %+v, Message makes %+v", p, want)
	}
	assistant := msg(nous.AssistantMessage("", nous.ToolCall{ID: "toolu_1", Name: "f"}))
	assistant.Parts = []nous.ContentPart{p}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), assistant, msg(nous.ToolMessage("toolu_1", "f", "ok"))))
	got := sentOf(t, send(t, c)).Messages[1].Content[0]
	if got["type"] != "thinking" || got["thinking"] != "Need the weather." || got["signature"] != "EqQBCkYIARgC" {
		t.Errorf("the part went as %v", got)
	}
	assistant.Parts[0].Content = "Need the time."
	c = nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("q")), assistant, msg(nous.ToolMessage("toolu_1", "f", "ok"))))
	if err := nousanthropic.Fill(&anthropic.MessageNewParams{}, c); !errors.Is(err, nousanthropic.ErrEditedThinking) {
		t.Errorf("Fill of an edited part: %v, want ErrEditedThinking", err)
	}
}
