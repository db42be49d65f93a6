package openai_test

import (
	"strings"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/provider/openai/openaitest"
)

// The deltas of each recorded stream: the text deltas make the final
// text, the thinking deltas of each reasoning item its thinking part, the
// argument deltas of each call its arguments; every delta of a call names
// it, and indexes count the pieces of each kind from 0.
func TestStreamDeltas(t *testing.T) {
	tests := map[string]struct{ texts, thinking, calls int }{
		"chat_text":                {texts: 1},
		"chat_parallel_calls":      {calls: 3},
		"chat_text_then_call":      {texts: 1, calls: 1},
		"chat_refusal":             {texts: 1},
		"chat_usage_details":       {texts: 1},
		"responses_text":           {texts: 1},
		"responses_reasoning":      {texts: 1, thinking: 1},
		"responses_parallel_calls": {calls: 3},
		"responses_web_search":     {texts: 1},
		"responses_incomplete":     {texts: 1},
	}
	cases := streamCases(t)
	if len(cases) != len(tests) {
		t.Fatalf("%d fixtures, %d cases", len(cases), len(tests))
	}
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) {
			want, ok := tests[sc.name]
			if !ok {
				t.Fatal("no case")
			}
			var deltas []nous.Delta
			_, final, err := play(t, sc, openaitest.Reply{Frames: sc.frames}, func(d nous.Delta) { deltas = append(deltas, d) })
			must(t, err)
			var text strings.Builder
			thinking := map[int]string{}
			args := map[int]string{}
			texts := map[int]bool{}
			for _, d := range deltas {
				switch d.Kind {
				case nous.DeltaText:
					text.WriteString(d.Text)
					texts[d.Index] = true
				case nous.DeltaThinking:
					thinking[d.Index] += d.Text
				case nous.DeltaToolCall:
					_, seen := args[d.Index]
					if d.Index < 0 || d.Index >= len(final.ToolCalls) {
						t.Fatalf("a call delta of index %d, of %d calls", d.Index, len(final.ToolCalls))
					}
					if tc := final.ToolCalls[d.Index]; d.ToolCallID != tc.ID || d.ToolName != tc.Name {
						t.Errorf("call %d: a delta of %s %s, the call is %s %s", d.Index, d.ToolCallID, d.ToolName, tc.ID, tc.Name)
					}
					if seen && d.Text == "" {
						t.Errorf("call %d: an empty delta", d.Index)
					}
					args[d.Index] += d.Text
				}
				if d.Kind != nous.DeltaToolCall && d.Text == "" {
					t.Errorf("an empty %s delta", d.Kind)
				}
			}
			if text.String() != final.Text() {
				t.Errorf("the text deltas make %q, the text is %q", text.String(), final.Text())
			}
			var parts []string
			for _, p := range final.Parts {
				if p.Type == nous.PartThinking {
					parts = append(parts, p.Content)
				}
			}
			for i, p := range parts {
				if thinking[i] != p {
					t.Errorf("thinking %d: the deltas make %q, the part is %q", i, thinking[i], p)
				}
			}
			for i, tc := range final.ToolCalls {
				if args[i] != string(tc.Arguments) {
					t.Errorf("call %d: the deltas make %s, the arguments are %s", i, args[i], tc.Arguments)
				}
			}
			if len(texts) != want.texts || len(thinking) != want.thinking || len(args) != want.calls || len(parts) != want.thinking || len(final.ToolCalls) != want.calls {
				t.Errorf("%d texts, %d thinking, %d calls in the deltas; want %+v", len(texts), len(thinking), len(args), want)
			}
			for i := range want.texts {
				if !texts[i] {
					t.Errorf("no text delta of index %d", i)
				}
			}
		})
	}
}
