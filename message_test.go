package nous_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

// t0 is a fixed, UTC creation time for messages whose equality is checked
// field by field.
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)

func TestValidate(t *testing.T) {
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name   string
		msg    nous.Message
		detail string // a word the error must carry; "" when valid
	}{
		{"system", nous.SystemMessage("be brief"), ""},
		{"user", nous.UserMessage("hi"), ""},
		{"user parts only", nous.UserMessageParts(nous.ImageURLPart("https://x/y.png")), ""},
		{"assistant", nous.AssistantMessage("hello"), ""},
		{"assistant empty while streaming", nous.Message{Role: nous.RoleAssistant}, ""},
		{"assistant tool calls only", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "search"}), ""},
		{"tool call object arguments", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(` {"q":"x"}`)}), ""},
		{"tool call empty object", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(`{}`)}), ""},
		{"tool", nous.ToolMessage("c1", "search", "found"), ""},
		{"every part type", nous.UserMessageParts(
			nous.TextPart("a"), nous.ImageURLPart("u"), nous.ContentPart{Type: nous.PartImage, Content: "aGk="},
			nous.ContentPart{Type: nous.PartFile, Content: "/x"}, nous.ContentPart{Type: nous.PartFileURL, Content: "u"},
			nous.ThinkingPart("hmm", "sig")), ""},

		{"unknown role", nous.Message{Role: "robot", Content: "x"}, "robot"},
		{"empty role", nous.Message{Content: "x"}, "role"},
		{"capitalised role", nous.Message{Role: "User", Content: "x"}, "User"},
		{"tool without call id", nous.Message{Role: nous.RoleTool, Content: "x"}, "tool call id"},
		{"call id on user", nous.Message{Role: nous.RoleUser, Content: "x", ToolCallID: "c1"}, "c1"},
		{"call id on assistant", nous.Message{Role: nous.RoleAssistant, Content: "x", ToolCallID: "c1"}, "c1"},
		{"call id on system", nous.Message{Role: nous.RoleSystem, Content: "x", ToolCallID: "c1"}, "c1"},
		{"empty user", nous.Message{Role: nous.RoleUser}, "empty"},
		{"empty system", nous.Message{Role: nous.RoleSystem}, "empty"},
		{"empty tool: a tool may return nothing", nous.Message{Role: nous.RoleTool, ToolCallID: "c1"}, ""},
		{"empty parts slice", nous.Message{Role: nous.RoleUser, Parts: []nous.ContentPart{}}, "empty"},
		{"tool call without id", nous.AssistantMessage("", nous.ToolCall{Name: "search"}), "search"},
		{"second tool call without id", nous.AssistantMessage("", nous.ToolCall{ID: "a"}, nous.ToolCall{Name: "b"}), "tool call 1"},
		{"tool calls on user", nous.Message{Role: nous.RoleUser, Content: "x", ToolCalls: []nous.ToolCall{{ID: "c"}}}, "tool calls"},
		{"tool calls on tool", nous.Message{Role: nous.RoleTool, ToolCallID: "c", Content: "x", ToolCalls: []nous.ToolCall{{ID: "c"}}}, "tool calls"},
		{"tool calls on system", nous.Message{Role: nous.RoleSystem, Content: "x", ToolCalls: []nous.ToolCall{{ID: "c"}}}, "tool calls"},
		// A model's malformed arguments do not lose its reply: the message
		// is valid, and ParseArguments says the arguments are unusable.
		{"array arguments", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(`[1]`)}), ""},
		{"string arguments", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(`"q"`)}), ""},
		{"number arguments", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(`42`)}), ""},
		{"truncated arguments", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(`{"q":`)}), ""},
		{"two objects", nous.AssistantMessage("", nous.ToolCall{ID: "c1", Arguments: args(`{}{}`)}), ""},
		{"unknown part type", nous.UserMessageParts(nous.TextPart("a"), nous.ContentPart{Type: "video", Content: "v"}), "video"},
		{"empty part type", nous.UserMessageParts(nous.ContentPart{Content: "v"}), "part 0"},
		// A part counts as content when it has content or options: an empty
		// text part does not, a redacted thinking block (only its opaque
		// data) does.
		{"only an empty text part", nous.UserMessageParts(nous.TextPart("")), "empty content"},
		{"redacted thinking", nous.UserMessageParts(nous.TextPart(""), nous.ContentPart{Type: nous.PartThinking, Options: map[string]any{"data": "opaque"}}), ""},
		// Arguments nested deeper than the format can carry are refused when
		// the message is added, not when a saved context no longer loads.
		{"arguments 1,001 levels deep", nous.AssistantMessage("", nous.ToolCall{ID: "c", Arguments: args(strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001))}), ""},
		{"arguments 1,000 levels deep", nous.AssistantMessage("", nous.ToolCall{ID: "c", Arguments: args(strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000))}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.msg.Validate()
			if tt.detail == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, nous.ErrInvalidMessage)
			assert.Contains(t, err.Error(), tt.detail)
		})
	}
}

func TestConstructors(t *testing.T) {
	before := time.Now()
	call := nous.ToolCall{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)}
	tests := []struct {
		name string
		got  nous.Message
		want nous.Message // without CreatedAt
	}{
		{"system", nous.SystemMessage("s"), nous.Message{Role: nous.RoleSystem, Content: "s"}},
		{"user", nous.UserMessage("u"), nous.Message{Role: nous.RoleUser, Content: "u"}},
		{"user parts", nous.UserMessageParts(nous.TextPart("a"), nous.ImageURLPart("b")),
			nous.Message{Role: nous.RoleUser, Parts: []nous.ContentPart{{Type: nous.PartText, Content: "a"}, {Type: nous.PartImageURL, Content: "b"}}}},
		{"assistant", nous.AssistantMessage("a"), nous.Message{Role: nous.RoleAssistant, Content: "a"}},
		{"assistant with call", nous.AssistantMessage("", call), nous.Message{Role: nous.RoleAssistant, ToolCalls: []nous.ToolCall{call}}},
		{"tool", nous.ToolMessage("c1", "search", "r"), nous.Message{Role: nous.RoleTool, ToolCallID: "c1", Name: "search", Content: "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.got
			require.False(t, got.CreatedAt.IsZero(), "CreatedAt not stamped")
			assert.False(t, got.CreatedAt.Before(before.Add(-time.Second)), "CreatedAt %v is before the call", got.CreatedAt)
			assert.Equal(t, time.UTC, got.CreatedAt.Location())
			got.CreatedAt = time.Time{}
			assert.Equal(t, tt.want, got)
			assert.NoError(t, tt.got.Validate())
		})
	}
	t.Run("thinking part", func(t *testing.T) {
		assert.Equal(t, nous.ContentPart{Type: nous.PartThinking, Content: "x", Options: map[string]any{"signature": "s"}}, nous.ThinkingPart("x", "s"))
		assert.Nil(t, nous.ThinkingPart("x", "").Options)
	})
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		msg  nous.Message
		want string
	}{
		{"content", nous.UserMessage("hello"), "hello"},
		{"text parts joined with nothing", nous.UserMessageParts(nous.TextPart("a"), nous.TextPart("b c")), "ab c"},
		{"other parts skipped", nous.UserMessageParts(nous.TextPart("a"), nous.ImageURLPart("u"), nous.ThinkingPart("t", ""), nous.TextPart("b")), "ab"},
		{"content wins over parts", nous.Message{Role: nous.RoleUser, Content: "c", Parts: []nous.ContentPart{nous.TextPart("p")}}, "c"},
		{"nothing", nous.Message{Role: nous.RoleAssistant}, ""},
		{"only images", nous.UserMessageParts(nous.ImageURLPart("u")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.msg.Text()) })
	}
}

func TestHasToolCalls(t *testing.T) {
	assert.False(t, nous.AssistantMessage("x").HasToolCalls())
	assert.False(t, nous.Message{Role: nous.RoleAssistant, ToolCalls: []nous.ToolCall{}}.HasToolCalls())
	assert.True(t, nous.AssistantMessage("", nous.ToolCall{ID: "a"}).HasToolCalls())
}

func TestRoleAndPartTypeValid(t *testing.T) {
	for _, r := range []nous.Role{nous.RoleSystem, nous.RoleUser, nous.RoleAssistant, nous.RoleTool} {
		assert.True(t, r.Valid(), r)
	}
	for _, r := range []nous.Role{"", "bot", "USER"} {
		assert.False(t, r.Valid(), r)
	}
	for _, p := range []nous.PartType{nous.PartText, nous.PartImageURL, nous.PartImage, nous.PartFile, nous.PartFileURL, nous.PartThinking} {
		assert.True(t, p.Valid(), p)
	}
	assert.False(t, nous.PartType("audio").Valid())
}

// fullMessage returns a message that uses every field, with maps and slices
// nested, so that a copy or a round trip that loses anything shows.
func fullMessage() nous.Message {
	return nous.Message{
		Role:    nous.RoleAssistant,
		Content: "let me look",
		Parts: []nous.ContentPart{
			nous.TextPart("part"),
			{Type: nous.PartImage, Content: "aGVsbG8=", Options: map[string]any{"media_type": "image/png", "detail": map[string]any{"w": 3}}},
			{Type: nous.PartThinking, Content: "think", Options: map[string]any{"signature": "EqQBCkgIARAB+/=<&>"}},
			{Type: nous.PartFile, Content: "/tmp/x", Options: map[string]any{}},
		},
		ReasoningContent: "because",
		ToolCalls: []nous.ToolCall{
			{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"go","n":3}`), Metadata: map[string]any{"thought_signature": "c2ln", "rank": 1}},
			{ID: "c2", Name: "noargs"},
		},
		Name:      "bot",
		Metadata:  map[string]any{"n": 7, "f": 1.5, "list": []any{1, "two", map[string]any{"three": 3}}, "nested": map[string]any{"deep": map[string]any{"k": true}}, "nil": nil},
		CreatedAt: t0,
	}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  nous.Message
	}{
		{"full", fullMessage()},
		{"plain", nous.Message{Role: nous.RoleUser, Content: "hi", CreatedAt: t0}},
		{"empty metadata stays empty", nous.Message{Role: nous.RoleUser, Content: "hi", Metadata: map[string]any{}}},
		{"tool", nous.Message{Role: nous.RoleTool, ToolCallID: "c1", Name: "n", Content: "r", CreatedAt: t0}},
		{"big and fractional numbers", nous.Message{Role: nous.RoleUser, Content: "x", Metadata: map[string]any{"big": 1 << 53, "neg": -4, "half": 0.5, "exp": 1e21}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.msg)
			require.NoError(t, err)
			var got nous.Message
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, tt.msg, got, "JSON: %s", b)
			// A second encoding is byte for byte the first.
			b2, err := json.Marshal(got)
			require.NoError(t, err)
			assert.Equal(t, string(b), string(b2))
		})
	}
}

func TestMessageJSONDetails(t *testing.T) {
	t.Run("whole numbers decode as int", func(t *testing.T) {
		var m nous.Message
		require.NoError(t, json.Unmarshal([]byte(`{"role":"user","content":"x","metadata":{"a":1,"b":2.5,"c":[3,{"d":4}],"e":1e2,"huge":123456789012345678901234567890}}`), &m))
		assert.Equal(t, 1, m.Metadata["a"])
		assert.Equal(t, 2.5, m.Metadata["b"])
		assert.Equal(t, []any{3, map[string]any{"d": 4}}, m.Metadata["c"])
		assert.Equal(t, 100.0, m.Metadata["e"])
		assert.Equal(t, json.Number("123456789012345678901234567890"), m.Metadata["huge"])
	})
	t.Run("nil maps are omitted, empty maps written", func(t *testing.T) {
		b, err := json.Marshal(nous.Message{Role: nous.RoleUser, Content: "x"})
		require.NoError(t, err)
		assert.JSONEq(t, `{"role":"user","content":"x"}`, string(b))
		b, err = json.Marshal(nous.Message{Role: nous.RoleUser, Content: "x", Metadata: map[string]any{}})
		require.NoError(t, err)
		assert.JSONEq(t, `{"role":"user","content":"x","metadata":{}}`, string(b))
	})
	t.Run("null metadata is nil", func(t *testing.T) {
		var m nous.Message
		require.NoError(t, json.Unmarshal([]byte(`{"role":"user","content":"x","metadata":null}`), &m))
		assert.Nil(t, m.Metadata)
	})
	t.Run("thinking signature byte for byte", func(t *testing.T) {
		sig := "ErUBCkYIBRgCIkDk+/==\u2028<script>&amp;\\\"quoted\"\x7f"
		m := nous.Message{Role: nous.RoleAssistant, Parts: []nous.ContentPart{nous.ThinkingPart("deep", sig)}}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var got nous.Message
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, sig, got.Parts[0].Options["signature"])
	})
	t.Run("tool call arguments kept raw", func(t *testing.T) {
		var tc nous.ToolCall
		require.NoError(t, json.Unmarshal([]byte(`{"id":"c","name":"n","arguments":{"z":1,  "a":[2]}}`), &tc))
		assert.Equal(t, `{"z":1,  "a":[2]}`, string(tc.Arguments))
	})
	t.Run("null arguments are nil", func(t *testing.T) {
		var tc nous.ToolCall
		require.NoError(t, json.Unmarshal([]byte(`{"id":"c","name":"n","arguments":null}`), &tc))
		assert.Nil(t, tc.Arguments)
		b, err := json.Marshal(tc)
		require.NoError(t, err)
		assert.JSONEq(t, `{"id":"c","name":"n"}`, string(b))
	})
	t.Run("tool call metadata ints", func(t *testing.T) {
		var tc nous.ToolCall
		require.NoError(t, json.Unmarshal([]byte(`{"id":"c","metadata":{"n":2,"x":{"y":3}}}`), &tc))
		assert.Equal(t, map[string]any{"n": 2, "x": map[string]any{"y": 3}}, tc.Metadata)
	})
	t.Run("part options ints and empty", func(t *testing.T) {
		var ps []nous.ContentPart
		require.NoError(t, json.Unmarshal([]byte(`[{"type":"image","content":"d","options":{"w":640}},{"type":"text","content":"t","options":{}},{"type":"text","content":"u"}]`), &ps))
		assert.Equal(t, []nous.ContentPart{
			{Type: nous.PartImage, Content: "d", Options: map[string]any{"w": 640}},
			{Type: nous.PartText, Content: "t", Options: map[string]any{}},
			{Type: nous.PartText, Content: "u"},
		}, ps)
	})
	t.Run("CreatedAt survives", func(t *testing.T) {
		m := nous.UserMessage("x") // stamped now, in UTC
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var got nous.Message
		require.NoError(t, json.Unmarshal(b, &got))
		assert.True(t, m.CreatedAt.Equal(got.CreatedAt))
		assert.Equal(t, m, got)
	})
}

func TestMessageJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		into any
		json string
	}{
		{"message not an object", &nous.Message{}, `[1]`},
		{"message metadata array", &nous.Message{}, `{"role":"user","metadata":[1]}`},
		{"message metadata string", &nous.Message{}, `{"role":"user","metadata":"x"}`},
		{"message role number", &nous.Message{}, `{"role":1}`},
		{"message bad part", &nous.Message{}, `{"role":"user","parts":[{"type":"text","options":7}]}`},
		{"message bad tool call", &nous.Message{}, `{"role":"assistant","tool_calls":[{"id":"c","metadata":[]}]}`},
		{"tool call not an object", &nous.ToolCall{}, `"x"`},
		{"tool call metadata number", &nous.ToolCall{}, `{"id":"c","metadata":3}`},
		{"part not an object", &nous.ContentPart{}, `true`},
		{"part options array", &nous.ContentPart{}, `{"type":"text","options":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tt.json), tt.into)
			require.Error(t, err)
		})
	}
}

func TestValidateErrorsAreDistinct(t *testing.T) {
	// Every rule names what was wrong: no two different rules give the same
	// text, so a reader can tell them apart.
	msgs := []nous.Message{
		{Role: "x", Content: "c"},
		{Role: nous.RoleTool, Content: "c"},
		{Role: nous.RoleUser, Content: "c", ToolCallID: "i"},
		{Role: nous.RoleUser},
		{Role: nous.RoleUser, Content: "c", ToolCalls: []nous.ToolCall{{ID: "i"}}},
		{Role: nous.RoleAssistant, ToolCalls: []nous.ToolCall{{}}},
		{Role: nous.RoleUser, Parts: []nous.ContentPart{{Type: "x"}}},
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		err := m.Validate()
		require.Error(t, err, "%+v", m)
		require.True(t, errors.Is(err, nous.ErrInvalidMessage))
		text := strings.TrimSuffix(err.Error(), nous.ErrInvalidMessage.Error())
		assert.False(t, seen[text], "duplicate error text %q", text)
		seen[text] = true
	}
}

// TestEmptyArgumentsAreNone checks that a tool call whose Arguments are
// empty but not nil, which Validate accepts as "no arguments", is stored as
// nil: an empty json.RawMessage cannot be encoded, and one such call would
// make the whole log impossible to write.
func TestEmptyArgumentsAreNone(t *testing.T) {
	c := nous.NewContext()
	m := nous.AssistantMessage("", nous.ToolCall{ID: "c", Name: "now", Arguments: json.RawMessage{}})
	require.NoError(t, m.Validate())
	require.NoError(t, c.AddMessage(m))
	c.AddToolCall(m.ToolCalls[0])
	assert.Nil(t, c.Messages()[0].ToolCalls[0].Arguments)
	assert.Nil(t, c.ToolCalls[0].Arguments)
	_, err := json.Marshal(c.Messages())
	assert.NoError(t, err)
	_, err = json.Marshal(c.Log().Events())
	assert.NoError(t, err)
}

func TestArgumentsObject(t *testing.T) {
	for _, tt := range []struct {
		args, want string
		invalid    bool
	}{
		{"", "{}", false},
		{`{"a":1}`, `{"a":1}`, false},
		{` {"b": [1, 2]} `, ` {"b": [1, 2]} `, false},
		{`[1]`, "", true},
		{`"text"`, "", true},
		{`{"a":`, "", true},
		{`null`, "", true},
	} {
		got, err := nous.ToolCall{ID: "c", Name: "f", Arguments: json.RawMessage(tt.args)}.ArgumentsObject()
		if tt.invalid {
			if !errors.Is(err, nous.ErrInvalidArguments) {
				t.Errorf("%q: %v, want ErrInvalidArguments", tt.args, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
}

// Messages copies a message that carries only metadata: writing the copy's
// map changes nothing in the context.
func TestMessagesCopiesMetadataOnly(t *testing.T) {
	c := nous.NewContext()
	m := nous.UserMessage("hi")
	m.Metadata = map[string]any{"k": "v"}
	require.NoError(t, c.AddMessage(m))
	got := c.Messages()
	got[0].Metadata["k"] = "changed"
	assert.Equal(t, "v", c.Messages()[0].Metadata["k"])
}
