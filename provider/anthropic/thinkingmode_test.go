package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

func adaptive() anthropic.ThinkingConfigParamUnion {
	return anthropic.ThinkingConfigParamUnion{OfAdaptive: &anthropic.ThinkingConfigAdaptiveParam{Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized}}
}

// A turn runs in one thinking mode: with thinking on, a request that ends in
// an open tool loop whose final assistant message does not start with
// thinking that goes back (the calls came from another provider, or from
// Anthropic with thinking off) is sent with thinking off (the API refuses
// it with thinking on: "a final assistant message must start with a
// thinking block"), an effort above high lowered to high; any other request
// keeps params's thinking and effort. The caller's base params, of which
// Fill fills a copy, keep theirs.
func TestOneThinkingModePerTurn(t *testing.T) {
	weather := nous.ToolCall{ID: "call_0", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	foreign := msg(nous.AssistantMessage("", weather)) // an OpenAI-compatible server's turn, its reasoning not Anthropic's
	foreign.Parts = []nous.ContentPart{{Type: nous.PartThinking, Content: "the user wants the weather", Options: map[string]any{"provider": "openai", "encrypted_content": "gAAA"}}}
	off, _, _ := nousanthropic.Message(decode(t, `{"id":"m","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"tool_use","id":"call_0","name":"weather","input":{"city":"Paris"}}],"usage":{}}`)) // Anthropic's, thinking off
	on, _, _ := nousanthropic.Message(decode(t, `{"id":"m","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","content":[
	{"type":"thinking","thinking":"I need the weather.","signature":"c2ln"},
	{"type":"tool_use","id":"call_0","name":"weather","input":{"city":"Paris"}}],"usage":{}}`))
	result := msg(nous.ToolMessage("call_0", "weather", "18°C"))
	open := func(a nous.Message) []nous.Message {
		return []nous.Message{msg(nous.UserMessage("Weather in Paris?")), a, result}
	}
	closed := append(open(foreign), msg(nous.AssistantMessage("It is 18°C.")), msg(nous.UserMessage("Thanks.")))
	textAfter := append(open(foreign), msg(nous.UserMessage("And tomorrow?"))) // one user message: the results, then the text
	disabled := anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}}
	between := anthropic.ThinkingConfigParamUnion{OfBetweenTools: &anthropic.ThinkingConfigBetweenToolsParam{}}
	const (
		sentAdaptive = `{"type":"adaptive","display":"summarized"}`
		sentDisabled = `{"type":"disabled"}`
		sentBetween  = `{"type":"between_tools"}`
	)
	for _, tt := range []struct {
		name     string
		view     []nous.Message
		model    anthropic.Model
		thinking anthropic.ThinkingConfigParamUnion
		want     string // the thinking sent; "" for none
		off      bool   // Fill turned thinking off
	}{
		{"another provider's calls", open(foreign), "claude-test", adaptive(), sentDisabled, true},
		{"Anthropic's calls made with thinking off", open(off), "claude-test", anthropic.ThinkingConfigParamOfEnabled(2048), sentDisabled, true},
		{"thinking left out, which recent models take as on", open(foreign), "claude-test", anthropic.ThinkingConfigParamUnion{}, sentDisabled, true},
		{"user text after the results, in their message", textAfter, "claude-test", adaptive(), sentDisabled, true},
		{"Claude Sonnet 5.5, which refuses disabled", open(foreign), anthropic.ModelClaudeSonnet5_5, adaptive(), sentBetween, true},
		{"a model whose thinking is always on", open(foreign), anthropic.ModelClaudeOpus5_5, adaptive(), sentAdaptive, false},
		{"signed thinking first", open(on), "claude-test", adaptive(), sentAdaptive, false},
		{"the loop closed", closed, "claude-test", adaptive(), sentAdaptive, false},
		{"no loop", []nous.Message{msg(nous.UserMessage("Hi"))}, "claude-test", adaptive(), sentAdaptive, false},
		{"thinking off already", open(foreign), "claude-test", disabled, sentDisabled, false},
		{"between_tools already", open(foreign), anthropic.ModelClaudeSonnet5_5, between, sentBetween, false},
		{"thinking left out, the loop closed", closed, "claude-test", anthropic.ThinkingConfigParamUnion{}, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := nous.NewContext()
			must(t, c.AddMessages(tt.view...))
			base := anthropic.MessageNewParams{Model: tt.model, MaxTokens: 4096, Thinking: tt.thinking,
				OutputConfig: anthropic.OutputConfigParam{Effort: anthropic.OutputConfigEffortXhigh}}
			before, _ := json.Marshal(base)
			var sent struct {
				Thinking     json.RawMessage `json:"thinking"`
				OutputConfig struct {
					Effort string `json:"effort"`
				} `json:"output_config"`
			}
			must(t, json.Unmarshal(sendWith(t, base, c), &sent))
			if (tt.want == "") != (sent.Thinking == nil) || tt.want != "" && !sameJSON(t, sent.Thinking, []byte(tt.want)) {
				t.Errorf("thinking sent %s, want %s", sent.Thinking, tt.want)
			}
			wantEffort := "xhigh"
			if tt.off {
				wantEffort = "high"
			}
			if sent.OutputConfig.Effort != wantEffort {
				t.Errorf("effort sent %q, want %q", sent.OutputConfig.Effort, wantEffort)
			}
			if after, _ := json.Marshal(base); string(after) != string(before) {
				t.Errorf("Fill changed the base params through its copy: %s, was %s", after, before)
			}
		})
	}
}

// On a model whose thinking cannot be turned off, the open loop's final
// step that came without thinking goes as text: the calls as text in the
// assistant's turn, their results as text opening the user message, so
// the request opens a new turn, which the API takes with thinking on.
func TestStepAsTextWhereThinkingStaysOn(t *testing.T) {
	weather := nous.ToolCall{ID: "call_0", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	c := nous.NewContext()
	must(t, c.AddMessages(msg(nous.UserMessage("Weather in Paris?")), msg(nous.AssistantMessage("Let me look.", weather)),
		msg(nous.ToolErrorMessage("call_0", "weather", "the service is down"))))
	for _, model := range []anthropic.Model{anthropic.ModelClaudeOpus5_5, "claude-fable-5-2"} {
		body := sendWith(t, anthropic.MessageNewParams{Model: model, MaxTokens: 4096, Thinking: adaptive()}, c)
		if problem := adapttest.CheckAnthropic(body); problem != "" {
			t.Fatalf("%s: %s\n%s", model, problem, body)
		}
		var sent struct {
			Thinking json.RawMessage `json:"thinking"`
			Messages []struct {
				Role    string `json:"role"`
				Content []struct{ Type, Text string }
			} `json:"messages"`
		}
		must(t, json.Unmarshal(body, &sent))
		m := sent.Messages
		if !sameJSON(t, sent.Thinking, []byte(`{"type":"adaptive","display":"summarized"}`)) || len(m) != 3 ||
			m[1].Content[1].Text != `[tool call weather {"city":"Paris"}, id call_0]` ||
			m[2].Content[0].Text != "[tool error of weather, id call_0: the service is down]" {
			t.Errorf("%s: sent %s", model, body)
		}
	}
	if c.Log().Len() != 3 || c.Messages()[1].ToolCalls[0].ID != "call_0" {
		t.Error("the view changed")
	}
}

// A view that ends with the assistant's answer gets a user message,
// Continue., after it: the API refuses a final assistant message that ends
// in white space (another provider's answer often does), and recent models
// any. A turn the API paused goes last, as the API goes on with it.
func TestEndsWithUser(t *testing.T) {
	answered := nous.NewContext()
	must(t, answered.AddMessages(msg(nous.UserMessage("Weather?")), msg(nous.AssistantMessage("It is sunny.\n"))))
	paused := nous.NewContext()
	must(t, paused.AddMessage(msg(nous.UserMessage("Search the web."))))
	m, _, err := nousanthropic.Message(decode(t, `{"id":"m","type":"message","role":"assistant","model":"claude-test","stop_reason":"pause_turn","content":[
	{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"weather"}}],"usage":{}}`))
	must(t, err)
	must(t, paused.AddMessage(m))
	for _, tc := range []struct {
		name string
		c    *nous.Context
		last string
	}{{"answered", answered, "user"}, {"paused", paused, "assistant"}} {
		var sent struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct{ Text string }
			} `json:"messages"`
		}
		must(t, json.Unmarshal(send(t, tc.c), &sent))
		last := sent.Messages[len(sent.Messages)-1]
		if last.Role != tc.last || tc.last == "user" && last.Content[0].Text != "Continue." {
			t.Errorf("%s: the request ends with %+v", tc.name, last)
		}
	}
}
