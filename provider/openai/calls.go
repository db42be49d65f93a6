package openai

import (
	"encoding/json"
	"strings"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// The longest call IDs each API takes: Chat Completions refuses a
// tool_calls[].id of more than 40 characters ("Invalid
// 'messages[2].tool_calls[0].id': string too long. Expected a string with
// maximum length 40"), the Responses API a call_id of more than 64
// ("string_above_max_length").
const (
	chatCallIDMax      = 40
	responsesCallIDMax = 64
)

// callIDs returns the call IDs to send for the view msgs: each call keeps
// its own unless a call before it in the view has it (a server that
// numbers its calls per turn, call_0 each time) or it is longer than limit;
// such a call, and its results, go under an ID made of it (see
// [adapt.CallIDs]). Both APIs take any other text as an ID.
func callIDs(msgs []nous.Message, limit int) *adapt.CallIDs {
	return adapt.NewCallIDs(msgs, func(id string) bool { return id != "" }, limit)
}

// view returns the messages of c's view, for reading only.
func view(c *nous.Context) []nous.Message {
	out := make([]nous.Message, 0, c.Len())
	for _, m := range c.All() {
		out = append(out, m)
	}
	return out
}

// arguments returns the arguments of a function call to send: a JSON
// object, as [adapt.Object] makes it of any arguments ({} for none; those
// that are not an object, which a model sends now and then, as
// {"invalid_arguments": their text}). Both APIs carry arguments as a
// string, and the SDK says a model's are not always valid JSON; OpenAI's
// API is not known to check those of the calls in a request, but servers
// that speak it (vLLM and SGLang decode them for their chat templates,
// others check them) refuse a request with arguments that are not an
// object, every turn after. In this form the model still sees what it
// sent.
func arguments(tc *nous.ToolCall) string { return string(adapt.Object(tc.Arguments)) }

// customInput returns the input of a custom tool's call to send: the text
// of its arguments {"input": text}, or, for arguments of another shape (a
// call edited, or made by another provider's model), their bytes as they
// are: a custom tool's input is free text, which the API takes whatever it
// holds.
func customInput(tc *nous.ToolCall) string {
	var in struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(tc.Arguments, &in) == nil && in.Input != nil {
		return *in.Input
	}
	return string(tc.Arguments)
}

// isCustom reports whether tc is a custom tool's call.
func isCustom(tc *nous.ToolCall) bool { return tc.Metadata[MetadataCustom] == true }

// resultText returns the text of a tool result: its Content and the
// content of its text parts, each on a line of its own ("\n" between two,
// none added to an empty one). The parts of a tool's output are chunks a
// runtime made, which a model reads as lines; servers that take a list of
// text parts where a string goes join them so too (vLLM's chat templates).
func resultText(m *nous.Message) string {
	var texts []string
	if m.Content != "" {
		texts = append(texts, m.Content)
	}
	for _, p := range m.Parts {
		if p.Type == nous.PartText && p.Content != "" {
			texts = append(texts, p.Content)
		}
	}
	return strings.Join(texts, adapt.ResultSeparator)
}
