package gemini_test

import (
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	nousgemini "github.com/nous-go/nous/provider/gemini"
)

// Thousands of random conversations: Contents refuses exactly the views
// whose pairing is broken (and those with content the API has no part
// for, or arguments that are not objects), with an *Error; the contents it
// makes keep the API's rules: roles alternate, no content is empty, no text
// is blank; a model turn's function calls are answered by the
// functionResponse parts that open the next user content, one per call,
// each named after its call.
func TestProperty(t *testing.T) {
	adapttest.Property(t, 3, 3000, []error{nousgemini.ErrUnsupported}, adapttest.Fill{
		Name: "Contents",
		Do: func(c *nous.Context) (any, error) {
			return nousgemini.Contents(c, &genai.GenerateContentConfig{})
		},
		Check: func(req any, _ []byte) string { return checkContents(req.([]*genai.Content)) },
	})
}

func checkContents(contents []*genai.Content) string {
	names := map[string]string{}
	var open []string
	for i, c := range contents {
		if len(c.Parts) == 0 {
			return "an empty content"
		}
		if i > 0 && contents[i-1].Role == c.Role {
			return "two " + c.Role + " contents in a row"
		}
		var answered []string
		others := false
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				if c.Role != genai.RoleUser || others {
					return "a functionResponse that does not open a user content"
				}
				if p.FunctionResponse.Name == "" || p.FunctionResponse.Name != names[p.FunctionResponse.ID] {
					return "a functionResponse named " + p.FunctionResponse.Name + ", its call " + names[p.FunctionResponse.ID]
				}
				answered = append(answered, p.FunctionResponse.ID)
			case p.FunctionCall != nil:
				names[p.FunctionCall.ID] = p.FunctionCall.Name
				others = true
			case p.InlineData == nil && p.FileData == nil && strings.TrimSpace(p.Text) == "":
				return "a blank text part"
			default:
				others = true
			}
		}
		if len(open) > 0 || len(answered) > 0 {
			if !adapttest.SameSet(open, answered) {
				return "calls " + strings.Join(open, ",") + " answered by " + strings.Join(answered, ",")
			}
		}
		open = nil
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				open = append(open, p.FunctionCall.ID)
			}
		}
	}
	if len(open) > 0 {
		return "calls left unanswered"
	}
	return ""
}
