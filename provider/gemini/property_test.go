package gemini_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// Thousands of random conversations: Fill refuses exactly the views whose
// pairing is broken, with an *Error, and nothing else (no content of these
// conversations is one the API has no part for: arguments that are not
// objects, a view that begins with the model, calls of other providers are
// all sent); the requests it makes keep every rule checkRequest checks.
func TestProperty(t *testing.T) {
	var view []nous.Message
	other := 0 // refusals for anything but the pairing
	adapttest.Property(t, 3, 3000, nil, adapttest.Fill{
		Name: "Fill",
		Do: func(c *nous.Context) (any, error) {
			view = c.Messages()
			p := nousgemini.Params{Model: "gemini-test", Config: &genai.GenerateContentConfig{}}
			err := nousgemini.Fill(&p, c)
			if err != nil && !errors.Is(err, nous.ErrUnpaired) {
				other++
				t.Logf("refused for other than the pairing: %v", err)
			}
			return p, err
		},
		Check: func(req any, _ []byte) string { return checkRequest(req.(nousgemini.Params), view) },
	})
	if other > 0 {
		t.Errorf("%d views refused for other than their pairing", other)
	}
}

// skip is the bytes of the documented signature for calls the API did not
// make.
var skip, _ = base64.URLEncoding.DecodeString(nousgemini.SkipSignatureValidator)

// checkRequest returns what is wrong with p, the request Fill made of view
// (its messages), "" for nothing. The rules:
//   - the contents are not empty and begin with a user content; no content
//     is empty; roles are user or model; two contents of one role follow
//     each other only as a user content of function responses and the user
//     content after it;
//   - no blank text part, nor a blank thought, without a signature; the
//     system instruction has no blank text;
//   - a model content with function calls follows a user content (text, or
//     function responses); its calls are answered by the next content, a
//     user content of function responses and nothing else, one per call in
//     the calls' order, each named after its call and with its ID;
//   - the function calls are the view's calls, in order: the same name,
//     their arguments an object (adapt.Object of the call's), an ID only
//     when Gemini gave the call that ID (Metadata[MetadataCallID]), the
//     call's own signature when it has one (never dropped, never changed);
//   - in the current turn (after the last user content with text), the
//     first function call of each model content carries a signature; the
//     documented one for calls the API did not make is there only on such
//     a first call without a signature of its own.
func checkRequest(p nousgemini.Params, view []nous.Message) string {
	contents := p.Contents
	if len(contents) == 0 {
		return "no contents"
	}
	if contents[0].Role != genai.RoleUser {
		return "the contents begin with a " + contents[0].Role + " content"
	}
	if si := p.Config.SystemInstruction; si != nil {
		if len(si.Parts) == 0 {
			return "an empty system instruction"
		}
		for _, part := range si.Parts {
			if strings.TrimSpace(part.Text) == "" {
				return "a blank text in the system instruction"
			}
		}
	}
	start := 0 // the content that begins the current turn
	for i, c := range contents {
		if c.Role == genai.RoleUser && hasText(c) {
			start = i
		}
	}
	var sent []*genai.Part // the function calls, in order
	var open []*genai.FunctionCall
	for i, c := range contents {
		if len(c.Parts) == 0 {
			return fmt.Sprintf("content %d is empty", i)
		}
		if c.Role != genai.RoleUser && c.Role != genai.RoleModel {
			return fmt.Sprintf("content %d has role %q", i, c.Role)
		}
		responses := isResponses(c)
		if i > 0 && contents[i-1].Role == c.Role && !(c.Role == genai.RoleUser && isResponses(contents[i-1]) && !responses) {
			return fmt.Sprintf("two %s contents in a row at %d", c.Role, i)
		}
		if responses {
			if problem := answers(c, open); problem != "" {
				return fmt.Sprintf("content %d: %s", i, problem)
			}
		} else if len(open) > 0 {
			return fmt.Sprintf("content %d: the calls of content %d are not answered", i, i-1)
		}
		open = nil
		first := true
		for _, part := range c.Parts {
			text := strings.TrimSpace(part.Text)
			switch {
			case part.FunctionCall != nil:
				if c.Role != genai.RoleModel || i == 0 || contents[i-1].Role != genai.RoleUser {
					return fmt.Sprintf("content %d: a function call that is not in a model content after a user content", i)
				}
				if bytes.Equal(part.ThoughtSignature, skip) && (!first || i < start) {
					return fmt.Sprintf("content %d: the signature for calls the API did not make on a call that is not the first of a step of the current turn", i)
				}
				if first && i > start && len(part.ThoughtSignature) == 0 {
					return fmt.Sprintf("content %d: the first call of a step of the current turn has no signature", i)
				}
				first = false
				open = append(open, part.FunctionCall)
				sent = append(sent, part)
			case part.FunctionResponse != nil, part.InlineData != nil, part.FileData != nil, len(part.ThoughtSignature) > 0:
			case text == "":
				return fmt.Sprintf("content %d: a blank text part (thought %v) without a signature", i, part.Thought)
			}
		}
	}
	if len(open) > 0 {
		return "the last calls are not answered"
	}
	var calls []nous.ToolCall
	for _, m := range view {
		calls = append(calls, m.ToolCalls...)
	}
	if len(calls) != len(sent) {
		return fmt.Sprintf("%d function calls sent for the view's %d", len(sent), len(calls))
	}
	for k, tc := range calls {
		if problem := sameCall(sent[k], tc); problem != "" {
			return fmt.Sprintf("call %d (%s): %s", k, tc.ID, problem)
		}
	}
	return ""
}

// hasText reports whether c has a text part that is not a function
// response: a user content with one begins a turn.
func hasText(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse == nil && p.Text != "" {
			return true
		}
	}
	return false
}

func isResponses(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// answers returns what is wrong with c as the answer to the calls open.
func answers(c *genai.Content, open []*genai.FunctionCall) string {
	if c.Role != genai.RoleUser {
		return "function responses in a " + c.Role + " content"
	}
	if len(c.Parts) != len(open) {
		return fmt.Sprintf("%d parts answer %d calls", len(c.Parts), len(open))
	}
	for k, p := range c.Parts {
		r := p.FunctionResponse
		switch {
		case r == nil:
			return "a content of function responses holds another part"
		case r.Name == "" || r.Name != open[k].Name:
			return fmt.Sprintf("response %d is named %q, its call %q", k, r.Name, open[k].Name)
		case r.ID != open[k].ID:
			return fmt.Sprintf("response %d has ID %q, its call %q", k, r.ID, open[k].ID)
		case r.Response == nil:
			return fmt.Sprintf("response %d has no response", k)
		}
	}
	return ""
}

// sameCall returns what is wrong with part as the function call of tc.
func sameCall(part *genai.Part, tc nous.ToolCall) string {
	fc := part.FunctionCall
	if fc.Name != tc.Name {
		return "sent as " + fc.Name
	}
	var want, got any
	if err := json.Unmarshal(adapt.Object(tc.Arguments), &want); err != nil {
		return err.Error()
	}
	b, _ := json.Marshal(fc.Args)
	if fc.Args == nil {
		b = []byte("{}")
	}
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("arguments %s sent for %s", b, tc.Arguments)
	}
	if given, _ := tc.Metadata[nousgemini.MetadataCallID].(string); fc.ID != "" && (given != tc.ID || fc.ID != tc.ID) {
		return fmt.Sprintf("sent with ID %q, which Gemini did not give it", fc.ID)
	}
	if s, _ := tc.Metadata[nous.OptionThoughtSignature].(string); s != "" {
		if base64.StdEncoding.EncodeToString(part.ThoughtSignature) != s {
			return "its signature " + s + " was dropped or changed"
		}
	} else if len(part.ThoughtSignature) > 0 && !bytes.Equal(part.ThoughtSignature, skip) {
		return "a signature it did not have"
	}
	return ""
}
