package switchtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The random answers of each provider's API, as JSON the SDKs decode: the
// shapes a real agent meets, with thinking and signatures, parallel calls,
// odd arguments where an API lets a model send them, and call IDs as each
// API gives them (OpenAI-compatible servers that answer call_0 every turn,
// Gemini calls without an ID).

var (
	tools = []string{"get_weather", "read_file", "search"}
	words = []string{"Paris", "sunny", "It is 21°C.", "Let me check.", "résumé é", "Done.", "It is sunny.\n"}
)

// object returns the JSON of a tool call's input: an object, mostly.
func object(r *rand.Rand) map[string]any {
	switch r.IntN(4) {
	case 0:
		return map[string]any{}
	default:
		return map[string]any{"city": words[r.IntN(len(words))], "days": r.IntN(5)}
	}
}

// argumentsText returns a Chat or Responses call's arguments: JSON text,
// now and then cut short, or not an object.
func argumentsText(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		return `{"city": "Par`
	case 1:
		return `null`
	case 2:
		return `[]`
	case 3:
		return `"x"`
	case 4:
		return ``
	}
	b, _ := json.Marshal(object(r))
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// counter numbers the IDs of the answers, and remembers what the checks
// need to know of them: the reasoning item each Responses item came after,
// the IDs Gemini gave.
type counter struct {
	n       int
	follows map[string]string
	gemini  map[string]bool
}

func newCounter() *counter { return &counter{follows: map[string]string{}, gemini: map[string]bool{}} }

func (c *counter) next() int { c.n++; return c.n }

// anthropicAnswer returns a Messages API response.
func anthropicAnswer(r *rand.Rand, n *counter) string {
	var blocks []string
	if r.IntN(2) == 0 {
		if r.IntN(6) == 0 {
			blocks = append(blocks, `{"type":"redacted_thinking","data":"cmVkYWN0ZWQ="}`)
		} else {
			blocks = append(blocks, fmt.Sprintf(`{"type":"thinking","thinking":%s,"signature":"c2lnLWFudGhyb3BpYw=="}`, jsonString("I should "+words[r.IntN(len(words))])))
		}
	}
	if r.IntN(3) > 0 {
		blocks = append(blocks, fmt.Sprintf(`{"type":"text","text":%s}`, jsonString(words[r.IntN(len(words))])))
	}
	stop := "end_turn"
	for range r.IntN(3) {
		stop = "tool_use"
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%02d","name":%q,"input":%s}`, n.next(), tools[r.IntN(len(tools))], jsonOf(object(r))))
	}
	return fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":"claude-test","stop_reason":%q,"content":[%s],
		"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d}}`,
		n.next(), stop, strings.Join(blocks, ","), 10+r.IntN(500), 1+r.IntN(100), r.IntN(50))
}

// The ways the servers that speak Chat Completions give call IDs.
const (
	idsUnique  = iota // OpenAI's: call_ and a unique suffix
	idsPerTurn        // call_0, call_1, ... every turn
	idsSame           // one ID for all the calls of a reply
	idsNone           // no ID at all
)

// chatAnswer returns a Chat Completions response of an OpenAI-compatible
// server that gives call IDs as ids says.
func chatAnswer(r *rand.Rand, n *counter, ids int) string {
	msg := map[string]any{"role": "assistant", "content": nil}
	if r.IntN(3) > 0 {
		msg["content"] = words[r.IntN(len(words))]
	}
	finish := "stop"
	var calls []map[string]any
	for k := range r.IntN(3) {
		finish = "tool_calls"
		var id string
		switch ids {
		case idsUnique:
			id = fmt.Sprintf("call_%02d", n.next())
		case idsPerTurn:
			id = fmt.Sprintf("call_%d", k)
		case idsSame:
			id = "call_0"
		}
		name := tools[r.IntN(len(tools))]
		if r.IntN(15) == 0 {
			name = "" // a server that left it out
		}
		calls = append(calls, map[string]any{"id": id, "type": "function",
			"function": map[string]any{"name": name, "arguments": argumentsText(r)}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	return jsonOf(map[string]any{"id": fmt.Sprint("chatcmpl-", n.next()), "object": "chat.completion", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": 10 + r.IntN(500), "completion_tokens": 1 + r.IntN(100), "total_tokens": 600}})
}

// responsesAnswer returns a Responses API response: reasoning items (with
// encrypted content, or by reference only, as with Store on), function
// calls and message items after them.
func responsesAnswer(r *rand.Rand, n *counter) string {
	var output []any
	for range 1 + r.IntN(2) {
		reasoning := ""
		calls, message := r.IntN(3), r.IntN(2) == 0 || len(output) == 0
		if r.IntN(2) == 0 && (calls > 0 || message) { // a reasoning item comes before what it led to
			reasoning = fmt.Sprint("rs_", n.next())
			item := map[string]any{"type": "reasoning", "id": reasoning,
				"summary": []any{map[string]any{"type": "summary_text", "text": "Thinking about " + words[r.IntN(len(words))]}}}
			if r.IntN(3) > 0 {
				item["encrypted_content"] = "ZW5jcnlwdGVk"
			}
			output = append(output, item)
		}
		for range calls {
			k := n.next()
			n.follows[fmt.Sprint("fc_", k)] = reasoning
			output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprint("fc_", k), "call_id": fmt.Sprint("call_", k),
				"name": tools[r.IntN(len(tools))], "arguments": argumentsText(r), "status": "completed"})
		}
		if message {
			id := fmt.Sprint("msg_", n.next())
			n.follows[id] = reasoning
			output = append(output, map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": words[r.IntN(len(words))], "annotations": []any{}}}})
		}
	}
	return jsonOf(map[string]any{"id": fmt.Sprint("resp_", n.next()), "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
		"output": output,
		"usage": map[string]any{"input_tokens": 10 + r.IntN(500), "output_tokens": 1 + r.IntN(100), "total_tokens": 600,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": r.IntN(50)}}})
}

// geminiAnswer returns a GenerateContent response: thoughts, calls with a
// signature on the first (as Gemini 3 models sign them), with an ID or
// without (as the API may leave it out).
func geminiAnswer(r *rand.Rand, n *counter) string {
	var parts []any
	if r.IntN(2) == 0 {
		parts = append(parts, map[string]any{"text": "Thinking: " + words[r.IntN(len(words))], "thought": true})
	}
	if r.IntN(2) == 0 {
		parts = append(parts, map[string]any{"text": words[r.IntN(len(words))]})
	}
	withIDs := r.IntN(2) == 0
	for k := range r.IntN(3) {
		call := map[string]any{"name": tools[r.IntN(len(tools))], "args": object(r)}
		if withIDs {
			id := fmt.Sprint("gem-", n.next())
			if k > 0 && r.IntN(8) == 0 {
				id = fmt.Sprint("gem-", n.n-1) // the ID of the call before it
			}
			n.gemini[id] = true
			call["id"] = id
		}
		part := map[string]any{"functionCall": call}
		if k == 0 { // a Gemini 3 model signs the first call of each step
			part["thoughtSignature"] = "c2lnLWdlbWluaQ=="
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		parts = append(parts, map[string]any{"text": "ok"})
	}
	return jsonOf(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": 10 + r.IntN(500), "candidatesTokenCount": 1 + r.IntN(100), "thoughtsTokenCount": r.IntN(30)},
		"modelVersion":  "gemini-test"})
}
