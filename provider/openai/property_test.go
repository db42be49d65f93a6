package openai_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// Thousands of random conversations: FillChat and FillResponses refuse
// exactly the views whose pairing is broken, with an *Error; FillResponses
// refuses nothing else, and FillChat only a file URL in a user message (the
// caller's content, which Chat has no place for: its error says to send
// the file's data, or use FillResponses). Every request they make keeps the
// rules checkChat and checkResponses check.
func TestProperty(t *testing.T) {
	chat := adapttest.Fill{
		Name: "FillChat",
		Do: func(c *nous.Context) (any, error) {
			var params openai.ChatCompletionNewParams
			err := nousopenai.FillChat(&params, c)
			return params, err // params as Fill left it
		},
		Check: func(_ any, body []byte) string { return checkChat(body) },
	}
	adapttest.Property(t, 2, 3000, []error{nousopenai.ErrUnsupported}, chat)
	adapttest.Property(t, 2, 3000, nil, responsesFill(new(int)))
}

// responsesFill is FillResponses for a property: params.Store unset, true
// and false in turn (n counts the requests).
func responsesFill(n *int) adapttest.Fill {
	return adapttest.Fill{
		Name: "FillResponses",
		Do: func(c *nous.Context) (any, error) {
			*n++
			params := responses.ResponseNewParams{Store: [...]param.Opt[bool]{{}, openai.Bool(true), openai.Bool(false)}[*n%3]}
			err := nousopenai.FillResponses(&params, c)
			return filled{params, c.Messages()}, err
		},
		Check: func(req any, body []byte) string { f := req.(filled); return checkResponses(f.params, f.view, body) },
	}
}

// filled is a Responses request and the view it was made of; it encodes
// as the request.
type filled struct {
	params responses.ResponseNewParams
	view   []nous.Message
}

func (f filled) MarshalJSON() ([]byte, error) { return json.Marshal(f.params) }

// Random conversations of the turns of a Responses API model (reasoning
// with its encrypted content or by reference, or without an ID, messages, function and
// custom tool calls, images, hosted tools' calls, IDs a server repeats each
// turn), read by ResponseMessage and edited as a runtime does (thinking
// dropped, or some of it; a call removed with its result; the record of
// each item's reasoning removed, as a message recorded before it has it),
// stored and loaded: FillResponses and FillChat refuse none, and each
// request keeps the rules checkResponses and checkChat check.
func TestPropertyResponsesTurns(t *testing.T) {
	fill, n := responsesFill(new(int)), 0
	for seed := range uint64(1500) {
		r := rand.New(rand.NewPCG(seed, 7))
		c := adapttest.RoundTrip(t, turns(t, r))
		req, err := fill.Do(c)
		if err != nil {
			t.Fatalf("seed %d: FillResponses refused %v", seed, err)
		}
		body, err := json.Marshal(req)
		must(t, err)
		if problem := fill.Check(req, body); problem != "" {
			t.Fatalf("seed %d: FillResponses: %s\n%s", seed, problem, body)
		}
		var chat openai.ChatCompletionNewParams
		if err := nousopenai.FillChat(&chat, c); err != nil {
			t.Fatalf("seed %d: FillChat refused %v", seed, err)
		}
		body, err = json.Marshal(chat)
		must(t, err)
		if problem := checkChat(body); problem != "" {
			t.Fatalf("seed %d: FillChat: %s\n%s", seed, problem, body)
		}
		n += strings.Count(string(body), `"tool_calls"`)
	}
	if n < 1000 {
		t.Errorf("only %d assistant turns with calls: the conversations no longer cover them", n)
	}
}

// turns returns a context of a few random turns of a Responses API model.
func turns(t *testing.T, r *rand.Rand) *nous.Context {
	c := nous.NewContext()
	must(t, c.AddMessage(nous.UserMessage("q")))
	n, k := 0, 0              // the items so far, and in the turn
	perTurn := r.IntN(3) == 0 // a server that numbers its items per turn
	id := func(prefix string) string {
		n, k = n+1, k+1
		if perTurn {
			return fmt.Sprint(prefix, "_", k)
		}
		return fmt.Sprint(prefix, "_", n)
	}
	for range 1 + r.IntN(4) {
		k = 0
		var output []string
		for range 1 + r.IntN(6) {
			switch r.IntN(7) {
			case 0, 1:
				enc := ""
				if r.IntN(3) > 0 {
					enc = `,"encrypted_content":"gAAAA"`
				}
				rs := id("rs")
				if r.IntN(8) == 0 {
					rs = "" // a server that gives its reasoning no ID
				}
				output = append(output, fmt.Sprintf(`{"type":"reasoning","id":%q,"summary":[{"type":"summary_text","text":"s"}]%s}`, rs, enc))
			case 2:
				output = append(output, fmt.Sprintf(`{"type":"message","id":%q,"role":"assistant","status":"completed","content":[{"type":"output_text","text":"t","annotations":[]}]}`, id("msg")))
			case 3, 4:
				args := [...]string{`{"city":"Paris"}`, `{"city": "Par`, `[]`, ``}[r.IntN(4)]
				output = append(output, fmt.Sprintf(`{"type":"function_call","id":%q,"call_id":%q,"name":"f","arguments":%q,"status":"completed"}`, id("fc"), id("call"), args))
			case 5:
				output = append(output, fmt.Sprintf(`{"type":"custom_tool_call","id":%q,"call_id":%q,"name":"sql","input":"SELECT 1","status":"completed"}`, id("ctc"), id("call")))
			case 6:
				if r.IntN(2) == 0 {
					output = append(output, fmt.Sprintf(`{"type":"image_generation_call","id":%q,"status":"completed","result":"UklGRg==","output_format":"png"}`, id("ig")))
				} else {
					output = append(output, fmt.Sprintf(`{"type":"web_search_call","id":%q,"status":"completed","action":{"type":"search","query":"q"}}`, id("ws")))
				}
			}
		}
		m, _ := read(t, responseOf(t, strings.Join(output, ",")))
		edit(r, &m)
		if m.Content == "" && len(m.Parts) == 0 && len(m.ToolCalls) == 0 {
			m.Content = "nothing"
		}
		must(t, c.AddMessage(m))
		calls := slices.Clone(m.ToolCalls)
		r.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
		for _, tc := range calls {
			must(t, c.AddMessage(nous.ToolMessage(tc.ID, tc.Name, "ok")))
		}
		if r.IntN(2) == 0 {
			must(t, c.AddMessage(nous.UserMessage("more")))
		}
	}
	return c
}

// edit changes m as a runtime might: drops its thinking, or some of it,
// or a call; removes the record of each item's reasoning; or nothing.
func edit(r *rand.Rand, m *nous.Message) {
	switch r.IntN(5) {
	case 0:
		dropThinking(m)
	case 1:
		var ids []string
		for _, p := range m.Parts {
			if id, _ := p.Options[nousopenai.OptionItemID].(string); p.Type == nous.PartThinking && r.IntN(2) == 0 {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			dropThinking(m, ids...)
		}
	case 2:
		if len(m.ToolCalls) > 0 {
			k := r.IntN(len(m.ToolCalls))
			m.ToolCalls = slices.Delete(slices.Clone(m.ToolCalls), k, k+1)
		}
	case 3:
		legacy(m)
	}
}

// isObject reports whether s is the text of a JSON object.
func isObject(s string) bool {
	var v map[string]any
	return json.Unmarshal([]byte(s), &v) == nil && v != nil
}

func blankContent(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s) == ""
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return false
	}
	for _, p := range parts {
		if p.Type == "text" && strings.TrimSpace(p.Text) == "" {
			return true
		}
	}
	return len(parts) == 0
}

// checkChat returns what breaks the API's rules in a Chat body: blank
// text; an assistant message with neither content nor calls; calls not
// answered by the role:tool messages right after their turn, one per call,
// or tool messages anywhere else; a call ID sent twice, empty or longer
// than 40 characters; a function call's arguments that are not an object.
func checkChat(body []byte) string {
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	var open []string
	sent := map[string]bool{}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			k := slices.Index(open, m.ToolCallID)
			if k < 0 {
				return "a tool message " + m.ToolCallID + " that answers no open call"
			}
			open = slices.Delete(open, k, k+1)
			continue
		}
		if len(open) > 0 {
			return "calls " + strings.Join(open, ",") + " not answered before a " + m.Role + " message"
		}
		if m.Content != nil && blankContent(m.Content) {
			return "blank content in a " + m.Role + " message"
		}
		if m.Role == "assistant" && m.Content == nil && len(m.ToolCalls) == 0 {
			return "an assistant message with neither content nor calls"
		}
		for _, tc := range m.ToolCalls {
			switch {
			case tc.ID == "" || len(tc.ID) > 40:
				return fmt.Sprintf("a call ID %q empty or longer than 40", tc.ID)
			case sent[tc.ID]:
				return "the call ID " + tc.ID + " sent twice"
			case tc.Type == "function" && !isObject(tc.Function.Arguments):
				return fmt.Sprintf("the arguments %q of %s are not an object", tc.Function.Arguments, tc.ID)
			}
			open, sent[tc.ID] = append(open, tc.ID), true
		}
	}
	if len(open) > 0 {
		return "calls left unanswered"
	}
	return ""
}

// checkResponses returns what breaks the API's rules in a Responses body,
// the request params made of view: blank text; a call not answered by its
// output (of its kind) before an item not of the model's turn (the model's
// own items of the turn may come between, as its response had them), or
// an output that answers no call; a reasoning item not followed by an item of the model's, one
// without an ID, or one by reference (without its encrypted content) while
// params.Store is false; a call ID sent twice, empty or longer than 64
// characters; an item ID sent twice; a function call's arguments that are
// not an object; an item sent with its ID after which the view records a
// reasoning item (MetadataReasoning) that is not among the model's items
// right before it.
func checkResponses(params responses.ResponseNewParams, view []nous.Message, body []byte) string {
	var req struct {
		Input []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			CallID    string          `json:"call_id"`
			Arguments string          `json:"arguments"`
			Encrypted string          `json:"encrypted_content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	after := reasoningRecords(view)
	storeFalse := params.Store.Valid() && !params.Store.Value
	open := map[string]string{} // an open call's ID → the type of its output
	callIDs, itemIDs := map[string]bool{}, map[string]bool{}
	var run []string // the reasoning items among the model's items right before
	for k, it := range req.Input {
		model := it.Type != "function_call_output" && it.Type != "custom_tool_call_output" && (it.Role == "" || it.Role == "assistant")
		if !model {
			run = nil
		}
		if it.ID != "" {
			if itemIDs[it.ID] {
				return "the item ID " + it.ID + " sent twice"
			}
			itemIDs[it.ID] = true
			if rs, ok := after[it.ID]; ok && it.Type != "reasoning" && !slices.ContainsFunc(rs, func(r string) bool { return r == "" || slices.Contains(run, r) }) {
				return fmt.Sprintf("the item %s goes with its ID without the reasoning item %v it came after", it.ID, rs)
			}
		}
		switch it.Type {
		case "function_call_output", "custom_tool_call_output":
			if open[it.CallID] != it.Type {
				return "an output " + it.CallID + " that answers no open call of its kind"
			}
			delete(open, it.CallID)
			continue
		case "reasoning":
			next := ""
			if k+1 < len(req.Input) {
				next = req.Input[k+1].Type
				if next == "" || next == "message" {
					next = req.Input[k+1].Role
				}
			}
			switch {
			case !slices.Contains([]string{"function_call", "custom_tool_call", "reasoning", "assistant", "image_generation_call"}, next):
				return "a reasoning item without a follower"
			case it.ID == "":
				return "a reasoning item without an ID"
			case storeFalse && it.Encrypted == "":
				return "the reasoning item " + it.ID + " by reference with store false"
			}
			run = append(run, it.ID)
			continue
		case "function_call", "custom_tool_call":
			switch {
			case it.CallID == "" || len(it.CallID) > 64:
				return fmt.Sprintf("a call ID %q empty or longer than 64", it.CallID)
			case callIDs[it.CallID]:
				return "the call ID " + it.CallID + " sent twice"
			case it.Type == "function_call" && !isObject(it.Arguments):
				return fmt.Sprintf("the arguments %q of %s are not an object", it.Arguments, it.CallID)
			}
			callIDs[it.CallID], open[it.CallID] = true, it.Type+"_output"
			continue
		}
		if len(open) > 0 && !model {
			return "calls not answered before a " + it.Role + " message"
		}
		if it.Content != nil && blankContent(it.Content) {
			return "blank content in a " + it.Role + " message"
		}
	}
	if len(open) > 0 {
		return "calls left unanswered"
	}
	return ""
}

// reasoningRecords returns, for each item ID of view's assistant messages
// (of a call, a text or image part, a message), the reasoning item IDs
// recorded as the ones it came after (MetadataReasoning; "" for none, or
// none recorded), one for each time the ID comes.
func reasoningRecords(view []nous.Message) map[string][]string {
	out := map[string][]string{}
	note := func(md map[string]any) {
		id, _ := md[nousopenai.MetadataItemID].(string)
		if id != "" {
			r, _ := md[nousopenai.MetadataReasoning].(string) // "" for none, or none recorded
			out[id] = append(out[id], r)
		}
	}
	for _, m := range view {
		note(m.Metadata)
		for _, p := range m.Parts {
			note(p.Options)
		}
		for _, tc := range m.ToolCalls {
			note(tc.Metadata)
		}
	}
	return out
}
