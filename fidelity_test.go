package nous_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// saveAndLoad returns c as Deserialize(c.Serialize()) gives it back.
func saveAndLoad(t *testing.T, c *nous.Context) *nous.Context {
	t.Helper()
	data, err := c.Serialize()
	require.NoError(t, err)
	d, err := nous.Deserialize(data)
	require.NoError(t, err)
	return d
}

// A struct or typed map dep reads back as itself after a save and a load,
// where it has become a map[string]any.
func TestDepOfAStructSurvivesPersistence(t *testing.T) {
	type profile struct {
		Name  string         `json:"name"`
		Age   int            `json:"age"`
		Langs []string       `json:"langs"`
		Extra map[string]int `json:"extra"`
	}
	want := profile{Name: "ada", Age: 36, Langs: []string{"en", "fr"}, Extra: map[string]int{"n": 1}}
	c := nous.NewContext(nous.WithDeps(map[string]any{
		"profile": want, "ptr": &want, "settings": map[string]string{"theme": "dark"}, "profiles": []profile{want},
	}))
	d := saveAndLoad(t, c)
	require.IsType(t, map[string]any{}, d.Deps["profile"], "persisted as a generic map")

	got, ok := nous.Dep[profile](d.Deps, "profile")
	require.True(t, ok)
	assert.Equal(t, want, got)
	ptr, ok := nous.Dep[*profile](d.Deps, "ptr")
	require.True(t, ok)
	assert.Equal(t, want, *ptr)
	settings, ok := nous.Dep[map[string]string](d.Deps, "settings")
	require.True(t, ok)
	assert.Equal(t, map[string]string{"theme": "dark"}, settings)
	list, ok := nous.Dep[[]profile](d.Deps, "profiles")
	require.True(t, ok)
	assert.Equal(t, []profile{want}, list)

	// A map that is not one: a key the struct lacks, or a value that does
	// not fit.
	_, ok = nous.Dep[profile](map[string]any{"p": map[string]any{"name": "ada", "shoe": 42}}, "p")
	assert.False(t, ok)
	_, ok = nous.Dep[profile](map[string]any{"p": map[string]any{"age": "old"}}, "p")
	assert.False(t, ok)
	_, ok = nous.Dep[string](map[string]any{"p": map[string]any{}}, "p")
	assert.False(t, ok)
}

// A typed slice grown by Append holds no spare capacity: two holders
// appending to it cannot overwrite each other.
func TestAppendToATypedSliceClipsIt(t *testing.T) {
	c := nous.NewContext(nous.WithDeps(map[string]any{"tags": []string{"a"}}))
	require.NoError(t, nous.NewContextUpdate().Append("tags", "b").Apply(c))
	tags := c.Deps["tags"].([]string)
	require.Equal(t, len(tags), cap(tags))
	x, y := append(tags, "x"), append(tags, "y")
	assert.Equal(t, "x", x[2], "y's append did not write into x")
	assert.Equal(t, "y", y[2])
	assert.Equal(t, []string{"a", "b"}, c.Deps["tags"])

	deps, err := nous.NewContextUpdate().Append("tags", "c").ToDeps(map[string]any{"tags": []string{"a"}})
	require.NoError(t, err)
	got := deps["tags"].([]string)
	assert.Equal(t, len(got), cap(got))
}

// FromRunContext: the run context's deps and usage win over options that
// set them, as in the reference.
func TestFromRunContextWins(t *testing.T) {
	rc := nous.NewRunContext(map[string]any{"from": "rc"}, nous.WithRunUsage(nous.Usage{Requests: 2}))
	c := nous.FromRunContext(rc, nous.WithDeps(map[string]any{"from": "option"}), nous.WithUsage(nous.Usage{Requests: 9}), nous.WithAgentName("a"))
	assert.Equal(t, map[string]any{"from": "rc"}, c.Deps)
	assert.Equal(t, nous.Usage{Requests: 2}, c.Usage)
	assert.Equal(t, "a", c.AgentName)
}

// An error that wraps Validate's says "nous:" once.
func TestErrorsSayTheirPrefixOnce(t *testing.T) {
	c := nous.NewContext(nous.WithMessages(nous.UserMessage("u")))
	bad := nous.Message{Role: nous.RoleTool, Content: "x"}
	errs := []error{
		c.AddMessages(nous.UserMessage("u"), bad),
		c.ReplaceMessage(0, bad),
		c.AddMessage(bad),
	}
	_, err := nous.Deserialize([]byte(`{"version":1,"messages":[{"role":"tool","content":"x"}]}`))
	errs = append(errs, err)
	_, err = nous.Fold([]nous.Event{{Seq: 1, Type: nous.EventToolResult, Message: &bad}})
	errs = append(errs, err)
	for _, err := range errs {
		require.ErrorIs(t, err, nous.ErrInvalidMessage)
		assert.Equal(t, 1, strings.Count(err.Error(), "nous:"), err.Error())
	}
}

// The overlay on a leading system message made only of parts comes after a
// blank line, as on one with Content.
func TestOverlayOnPartsHasItsBlankLine(t *testing.T) {
	c := nous.NewContext()
	require.NoError(t, c.AddMessage(nous.Message{Role: nous.RoleSystem, Parts: []nous.ContentPart{nous.TextPart("base rules")}}))
	c.SetSystemPromptOverlay("alpha")
	m, _ := c.LastMessage()
	assert.Equal(t, "base rules\n\nalpha", m.Text())
}
