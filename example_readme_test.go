package nous_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// Example is the README's example: TestExampleIsTheREADMEs keeps the two
// the same, so the README's code runs and its output is checked.
func Example() {
	c := nous.NewContext(nous.WithSystemPrompt("You are terse."))
	c.AddMessage(nous.SystemMessage(c.SystemPrompt))
	c.AddMessage(nous.UserMessage("Remember that I like tea."))

	// A tool gets a snapshot and returns an update instead of mutating.
	rc := c.ToRunContext()
	update := nous.NewContextUpdate().
		Append("notes", "likes tea").
		LogEvent(nous.EventToolCall, map[string]any{"name": "remember", "retry": rc.Retry})
	if err := update.Apply(c); err != nil {
		log.Fatal(err)
	}
	c.AddMessage(nous.AssistantMessage("Noted."))

	for i, m := range c.All() { // the view: a fold of the log, no copy
		fmt.Println(i, m.Role, m.Text())
	}
	fmt.Println(c.Log().Len(), "events") // 5: three messages, the deps_update and the tool_call
	// Output:
	// 0 system You are terse.
	// 1 user Remember that I like tea.
	// 2 assistant Noted.
	// 5 events
}

// TestExampleIsTheREADMEs checks that the go block of README.md's Example
// section is the body of Example, line for line, indentation aside.
func TestExampleIsTheREADMEs(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Example\n")
	require.True(t, ok, "README.md has no Example section")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "README.md's Example section has no go block")
	block, _, ok = strings.Cut(block, "\n```")
	require.True(t, ok, "README.md's go block does not end")

	fset := token.NewFileSet()
	src, err := os.ReadFile("example_readme_test.go")
	require.NoError(t, err)
	f, err := parser.ParseFile(fset, "example_readme_test.go", src, 0)
	require.NoError(t, err)
	var body string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Example" {
			body = string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		}
	}
	body, _, ok = strings.Cut(body, "// Output:")
	require.True(t, ok, "Example has no output")
	lines := func(s string) []string {
		out := strings.Split(strings.TrimSpace(s), "\n")
		for i := range out {
			out[i] = strings.TrimSpace(out[i])
		}
		return out
	}
	require.Equal(t, lines(block), lines(body), "README.md's example and Example differ")
}
