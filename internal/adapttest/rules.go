package adapttest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The documented rules of each API on a request body, as the SDK sends it:
// each Check function returns the first rule a body breaks, "" for none.

type anthropicBlock struct {
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	ToolUseID string          `json:"tool_use_id"`
	Input     json.RawMessage `json:"input"`
}

// anthropicMessage is a message of a Messages API request.
type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// CheckAnthropic checks a Messages API request: non-blank system blocks;
// messages that begin with a user message and alternate roles (system
// messages in their place aside); no empty
// content, no blank text; tool_use IDs unique and of the API's form, their
// inputs objects; the tool_use blocks of each assistant message answered
// by the tool_result blocks that open the next user message, one per call,
// and no tool_result anywhere else; thinking only first in an assistant
// message; with thinking on, a tool loop's final assistant message opens
// with thinking; calls with names; no final assistant message but a turn
// the API paused (a server tool's), and none that ends in white space.
func CheckAnthropic(body []byte) string {
	var req struct {
		System   []anthropicBlock `json:"system"`
		Thinking struct {
			Type string `json:"type"`
		} `json:"thinking"`
		Messages []anthropicMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	for _, b := range req.System {
		if strings.TrimSpace(b.Text) == "" {
			return "a blank system block"
		}
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != "user" {
		return "the messages do not begin with a user message"
	}
	ids := map[string]bool{}
	var open []string // the calls of the last assistant message
	lastAssistant := -1
	for i, m := range req.Messages {
		if len(m.Content) == 0 {
			return fmt.Sprintf("message %d has no content", i)
		}
		if i > 0 && m.Role == req.Messages[i-1].Role && m.Role != "system" { // system messages in place may follow one another
			return fmt.Sprintf("messages %d and %d are both %s messages", i-1, i, m.Role)
		}
		results, calls, problem := checkAnthropicBlocks(i, m, ids)
		if problem != "" {
			return problem
		}
		if (len(open) > 0 || len(results) > 0) && !SameSet(open, results) {
			return fmt.Sprintf("message %d: tool_use blocks %v answered by %v", i, open, results)
		}
		open = calls
		if m.Role == "assistant" {
			lastAssistant = i
		}
	}
	if len(open) > 0 {
		return "tool_use blocks left unanswered"
	}
	return checkAnthropicEnd(req.Messages, req.Thinking.Type, lastAssistant)
}

// checkAnthropicBlocks checks the blocks of message i, m, and returns the
// IDs of its tool_result blocks and of its tool_use blocks, in their
// order, or the first rule a block breaks: a blank text; a tool_result
// that does not open a user message; a tool_use outside an assistant
// message, of an ID that ids holds or not of the API's form, without a
// name or with an input that is not an object; thinking not first in an
// assistant message. It adds the IDs of m's tool_use blocks to ids, the
// IDs of the messages before m.
func checkAnthropicBlocks(i int, m anthropicMessage, ids map[string]bool) (results, calls []string, problem string) {
	others := false
	for k, b := range m.Content {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) == "" {
				return nil, nil, fmt.Sprintf("message %d: a blank text block", i)
			}
			others = true
		case "tool_result":
			if m.Role != "user" || others {
				return nil, nil, fmt.Sprintf("message %d: a tool_result block that does not open a user message", i)
			}
			results = append(results, b.ToolUseID)
		case "tool_use":
			if m.Role != "assistant" {
				return nil, nil, fmt.Sprintf("message %d: a tool_use block in a %s message", i, m.Role)
			}
			if ids[b.ID] || !anthropicID.MatchString(b.ID) {
				return nil, nil, fmt.Sprintf("message %d: tool_use ID %q used twice or not of the API's form", i, b.ID)
			}
			ids[b.ID] = true
			if b.Name == "" {
				return nil, nil, fmt.Sprintf("message %d: tool_use %s without a name", i, b.ID)
			}
			if !isObject(b.Input) {
				return nil, nil, fmt.Sprintf("message %d: tool_use %s has input %s, not an object", i, b.ID, b.Input)
			}
			calls = append(calls, b.ID)
			others = true
		case "thinking", "redacted_thinking":
			if m.Role != "assistant" || k > 0 && m.Content[k-1].Type != "thinking" && m.Content[k-1].Type != "redacted_thinking" {
				return nil, nil, fmt.Sprintf("message %d: thinking that is not first in an assistant message", i)
			}
		default:
			others = true
		}
	}
	return results, calls, ""
}

// checkAnthropicEnd checks the end of msgs, a request's messages (at
// least one, none without content), whose thinking has the type thinking
// and whose last assistant message is lastAssistant (-1 for none): no
// final assistant message but one the API paused (a server tool's), and
// none that ends in white space; with thinking on, a tool loop's final
// assistant message opens with thinking. It returns the first rule they
// break, "" for none.
func checkAnthropicEnd(msgs []anthropicMessage, thinking string, lastAssistant int) string {
	last := msgs[len(msgs)-1]
	if last.Role == "assistant" {
		paused := false
		for _, b := range last.Content {
			paused = paused || b.Type == "server_tool_use"
		}
		if b := last.Content[len(last.Content)-1]; !paused || b.Type == "text" && strings.TrimRight(b.Text, " \t\n\r") != b.Text {
			return "the messages end with an assistant message the API did not pause, or one that ends in white space"
		}
	}
	// Thinking may be on when it is enabled or adaptive, or left out
	// (recent models think by default); "disabled" and "between_tools" are off.
	if thinking != "disabled" && thinking != "between_tools" && lastAssistant >= 0 && last.Content[0].Type == "tool_result" {
		if t := msgs[lastAssistant].Content[0].Type; t != "thinking" && t != "redacted_thinking" {
			return fmt.Sprintf("thinking is on and the tool loop's final assistant message %d opens with %s", lastAssistant, t)
		}
	}
	return ""
}

// CheckChat checks a Chat Completions request: messages; no blank text;
// the tool calls of an assistant message answered by the tool messages
// right after it, one per call, and no tool message anywhere else; call IDs
// unique in the request and at most 40 characters; function arguments the
// text of an object (servers that speak the API refuse others).
func CheckChat(body []byte) string {
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
				Custom *struct {
					Input string `json:"input"`
				} `json:"custom"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return err.Error()
	}
	if len(req.Messages) == 0 {
		return "no messages"
	}
	ids := map[string]bool{}
	var open []string
	for i, m := range req.Messages {
		if m.Role == "tool" {
			k := indexOf(open, m.ToolCallID)
			if k < 0 {
				return fmt.Sprintf("message %d: a tool message for %q, which is not open", i, m.ToolCallID)
			}
			open = append(open[:k], open[k+1:]...)
			continue
		}
		if len(open) > 0 {
			return fmt.Sprintf("message %d: calls %v left unanswered before it", i, open)
		}
		if blankContent(m.Content) && (m.Role != "assistant" || len(m.ToolCalls) == 0) {
			return fmt.Sprintf("message %d: a %s message without text", i, m.Role)
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || ids[tc.ID] || len(tc.ID) > 40 {
				return fmt.Sprintf("message %d: call ID %q empty, used twice or over 40 characters", i, tc.ID)
			}
			if tc.Custom == nil && tc.Function.Arguments != nil && !isObject(json.RawMessage(*tc.Function.Arguments)) {
				return fmt.Sprintf("message %d: call %s has arguments %q, not an object", i, tc.ID, *tc.Function.Arguments)
			}
			ids[tc.ID] = true
			if tc.Custom == nil && tc.Function.Name == "" {
				return fmt.Sprintf("message %d: call %s without a name", i, tc.ID)
			}
			if tc.Function.Arguments == nil && tc.Custom == nil {
				return fmt.Sprintf("message %d: call %s without arguments", i, tc.ID)
			}
			open = append(open, tc.ID)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("calls %v left unanswered", open)
	}
	return ""
}

// CheckResponses returns the check of a Responses API request: every
// function call answered by one output after it and before the next
// message of the user, call IDs unique and at most 64 characters, function
// arguments the text of an object; a reasoning item followed by an
// item that is not one; with store off, no reasoning item without its
// encrypted content; and each item sent with an ID that came after a
// reasoning item (follows returns that item's ID, "" for none) sent after
// that item.
func CheckResponses(follows func(itemID string) string) func(body []byte) string {
	return func(body []byte) string {
		var req struct {
			Store *bool `json:"store"`
			Input []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				Role      string          `json:"role"`
				CallID    string          `json:"call_id"`
				Arguments string          `json:"arguments"`
				Encrypted *string         `json:"encrypted_content"`
				Content   json.RawMessage `json:"content"`
			} `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return err.Error()
		}
		calls, sent := map[string]bool{}, map[string]bool{}
		var open []string
		for i, it := range req.Input {
			if it.ID != "" {
				if sent[it.ID] {
					return fmt.Sprintf("item %d: ID %s sent twice", i, it.ID)
				}
				if r := follows(it.ID); r != "" && !sent[r] {
					return fmt.Sprintf("item %d: %s sent without its reasoning item %s before it", i, it.ID, r)
				}
				sent[it.ID] = true
			}
			switch it.Type {
			case "function_call", "custom_tool_call":
				if calls[it.CallID] || len(it.CallID) > 64 {
					return fmt.Sprintf("item %d: call_id %s used twice or over 64 characters", i, it.CallID)
				}
				if it.Type == "function_call" && !isObject(json.RawMessage(it.Arguments)) {
					return fmt.Sprintf("item %d: call %s has arguments %q, not an object", i, it.CallID, it.Arguments)
				}
				calls[it.CallID] = true
				open = append(open, it.CallID)
			case "function_call_output", "custom_tool_call_output":
				k := indexOf(open, it.CallID)
				if k < 0 {
					return fmt.Sprintf("item %d: an output for %s, which is not open", i, it.CallID)
				}
				open = append(open[:k], open[k+1:]...)
			case "reasoning":
				if i+1 == len(req.Input) || req.Input[i+1].Type == "reasoning" {
					return fmt.Sprintf("item %d: a reasoning item without an item after it", i)
				}
				if req.Store != nil && !*req.Store && (it.Encrypted == nil || *it.Encrypted == "") {
					return fmt.Sprintf("item %d: reasoning %s by reference only, with store off", i, it.ID)
				}
			default: // a message
				if it.Role != "assistant" && len(open) > 0 {
					return fmt.Sprintf("item %d: a %s message while calls %v are open", i, it.Role, open)
				}
				if blankContent(it.Content) {
					return fmt.Sprintf("item %d: a %s message without text", i, it.Role)
				}
			}
		}
		if len(open) > 0 {
			return fmt.Sprintf("calls %v left unanswered", open)
		}
		return ""
	}
}

type geminiPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"functionResponse"`
	InlineData json.RawMessage `json:"inlineData"`
	FileData   json.RawMessage `json:"fileData"`
}

// geminiContent is a content of a GenerateContent request.
type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// CheckGemini returns the check of a GenerateContent request, as the JSON
// of {"contents": ..., "systemInstruction": ...}: contents that begin with
// a user content; no empty content, no blank text; a model content with
// function calls after a user content; its calls answered by the
// functionResponse parts of the next content, in their order and by name
// (and ID when the call has one); calls with names; the last content a
// user's; no ID the API did not give (given says);
// in the current turn (after the last user text), the first call of each
// model content with a thought signature.
func CheckGemini(given func(id string) bool) func(body []byte) string {
	return func(body []byte) string {
		var req struct {
			Contents []geminiContent `json:"contents"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return err.Error()
		}
		if len(req.Contents) == 0 || req.Contents[0].Role != "user" {
			return "the contents do not begin with a user content"
		}
		turn := 0 // the index of the content that opens the current turn
		var open []geminiPart
		for i, c := range req.Contents {
			if len(c.Parts) == 0 {
				return fmt.Sprintf("content %d has no parts", i)
			}
			calls, answers, userText, problem := checkGeminiParts(i, c, given)
			if problem != "" {
				return problem
			}
			if problem := checkGeminiAnswers(i, open, answers); problem != "" {
				return problem
			}
			if len(calls) > 0 && (i == 0 || req.Contents[i-1].Role != "user") {
				return fmt.Sprintf("content %d: function calls that do not follow a user content", i)
			}
			if userText {
				turn = i
			}
			open = calls
		}
		if len(open) > 0 {
			return "function calls left unanswered"
		}
		if req.Contents[len(req.Contents)-1].Role != "user" {
			return "the contents end with a model content"
		}
		return checkGeminiSignatures(req.Contents, turn)
	}
}

// checkGeminiParts checks the parts of content i, c, and returns its
// functionCall parts and its functionResponse parts, in their order, and
// whether it is a user content with text (not a thought), or the first
// rule a part breaks: a functionCall outside a model content, without a
// name, or with an ID the API did not give (given says); a blank text
// part.
func checkGeminiParts(i int, c geminiContent, given func(id string) bool) (calls, answers []geminiPart, userText bool, problem string) {
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			if c.Role != "model" {
				return nil, nil, false, fmt.Sprintf("content %d: a functionCall in a %s content", i, c.Role)
			}
			if p.FunctionCall.Name == "" {
				return nil, nil, false, fmt.Sprintf("content %d: a functionCall without a name", i)
			}
			if p.FunctionCall.ID != "" && !given(p.FunctionCall.ID) {
				return nil, nil, false, fmt.Sprintf("content %d: functionCall ID %q, which the API did not give", i, p.FunctionCall.ID)
			}
			calls = append(calls, p)
		case p.FunctionResponse != nil:
			answers = append(answers, p)
		case p.InlineData == nil && p.FileData == nil && strings.TrimSpace(p.Text) == "" && p.ThoughtSignature == "":
			return nil, nil, false, fmt.Sprintf("content %d: a blank text part", i)
		case c.Role == "user" && !p.Thought:
			userText = true
		}
	}
	return calls, answers, userText, ""
}

// checkGeminiAnswers checks answers, the functionResponse parts of
// content i, against open, the calls of the content before it: one per
// call, in the calls' order, each of its call's name and ID. It returns
// the first rule they break, "" for none (and when there are neither
// calls nor answers).
func checkGeminiAnswers(i int, open, answers []geminiPart) string {
	if len(open) == 0 && len(answers) == 0 {
		return ""
	}
	if len(open) != len(answers) {
		return fmt.Sprintf("content %d: %d calls answered by %d functionResponse parts", i, len(open), len(answers))
	}
	for k, a := range answers {
		call := open[k].FunctionCall
		if a.FunctionResponse.Name != call.Name || a.FunctionResponse.ID != call.ID {
			return fmt.Sprintf("content %d: response %d (%s %q) answers call %s %q", i, k, a.FunctionResponse.Name, a.FunctionResponse.ID, call.Name, call.ID)
		}
	}
	return ""
}

// checkGeminiSignatures checks the current turn of contents, the contents
// from turn on: the first functionCall of each of them has a thought
// signature. It returns the first content whose call has none, as the
// rule it breaks, "" for none.
func checkGeminiSignatures(contents []geminiContent, turn int) string {
	for i := turn; i < len(contents); i++ {
		for _, p := range contents[i].Parts {
			if p.FunctionCall != nil {
				if p.ThoughtSignature == "" {
					return fmt.Sprintf("content %d, in the current turn: its first functionCall has no thought signature", i)
				}
				break
			}
		}
	}
	return ""
}

func isObject(raw json.RawMessage) bool {
	var v map[string]any
	return json.Unmarshal(raw, &v) == nil && v != nil
}

// blankContent reports whether a message's content (a string, or a list of
// parts with text) has no text but white space and no other part.
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
		return len(raw) == 0 || string(raw) == "null"
	}
	for _, p := range parts {
		if p.Type != "text" && p.Type != "input_text" && p.Type != "output_text" || strings.TrimSpace(p.Text) != "" {
			return false
		}
	}
	return true
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
