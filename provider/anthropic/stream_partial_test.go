package anthropic_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	nousanthropic "github.com/nous-go/nous/provider/anthropic"
)

// A stream cut when its blocks hold nothing but white space has nothing
// the API takes back (it refuses a blank text block, and a blank thinking
// block is no thinking): Partial is the zero Message, as for a stream that
// gave nothing.
func TestMessageStreamPartialOfBlankBlocksIsZero(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`
	for name, block := range map[string][2]string{
		"text":     {`{"type":"text","text":""}`, `{"type":"text_delta","text":%q}`},
		"thinking": {`{"type":"thinking","thinking":"","signature":""}`, `{"type":"thinking_delta","thinking":%q}`},
	} {
		for _, blank := range []string{" ", "\n\n", " \t\n"} {
			t.Run(fmt.Sprintf("%s %q", name, blank), func(t *testing.T) {
				events := []string{start,
					`{"type":"content_block_start","index":0,"content_block":` + block[0] + `}`,
					`{"type":"content_block_delta","index":0,"delta":` + fmt.Sprintf(block[1], blank) + `}`,
				}
				var s nousanthropic.MessageStream
				for _, raw := range events {
					var e anthropic.MessageStreamEventUnion
					if err := json.Unmarshal([]byte(raw), &e); err != nil {
						t.Fatal(err)
					}
					if err := s.Add(e); err != nil {
						t.Fatal(err)
					}
				}
				m, u := s.Partial()
				if m.Role != "" || m.Content != "" || len(m.Parts) != 0 {
					b, _ := json.Marshal(m)
					t.Errorf("Partial is %s, not the zero Message", b)
				}
				if u.Requests != 1 || u.InputTokens != 5 {
					t.Errorf("usage %+v", u)
				}
			})
		}
	}
}
