package adapt

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nous-go/nous"
)

func TestObject(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{`  `, `{}`},
		{`null`, `{}`},
		{`{"city":"Paris"}`, `{"city":"Paris"}`},
		{` {"a":1} `, ` {"a":1} `},
		{`{"city": "Par`, `{"invalid_arguments":"{\"city\": \"Par"}`},
		{`[]`, `{"invalid_arguments":"[]"}`},
		{`"x"`, `{"invalid_arguments":"\"x\""}`},
		{`12`, `{"invalid_arguments":"12"}`},
		{`{"a":1}{`, `{"invalid_arguments":"{\"a\":1}{"}`},
	} {
		got := Object(json.RawMessage(tc.in))
		if string(got) != tc.want {
			t.Errorf("Object(%q) = %s, want %s", tc.in, got, tc.want)
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Errorf("Object(%q) = %s, not an object: %v", tc.in, got, err)
		}
	}
}

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`).MatchString

func TestCallIDs(t *testing.T) {
	call := func(id string) nous.ToolCall { return nous.ToolCall{ID: id, Name: "f"} }
	view := []nous.Message{
		nous.UserMessage("q"),
		nous.AssistantMessage("", call("call_0"), call("call_1")), // 1
		nous.ToolMessage("call_1", "f", "1"),
		nous.ToolMessage("call_0", "f", "0"),
		nous.AssistantMessage("", call("call_0")), // 4: reused
		nous.ToolMessage("call_0", "f", "again"),
		nous.AssistantMessage("", call("call_0_2"), call("call_0")), // 6: the made-up ID's own form, then reused again
		nous.ToolMessage("call_0_2", "f", "x"),
		nous.ToolMessage("call_0", "f", "y"),
		nous.AssistantMessage("", call("fn.get weather")), // 9: characters the API refuses
		nous.ToolMessage("fn.get weather", "f", "z"),
	}
	ids := NewCallIDs(view, anthropicID, 0)
	for _, tc := range []struct {
		i, k int
		want string
	}{{1, 0, "call_0"}, {1, 1, "call_1"}, {4, 0, "call_0_3"}, {6, 0, "call_0_2"}, {6, 1, "call_0_4"}, {9, 0, "fn_get_weather_2"}} {
		if got := ids.Call(tc.i, tc.k, view[tc.i].ToolCalls[tc.k].ID); got != tc.want {
			t.Errorf("call %d of message %d: %q, want %q", tc.k, tc.i, got, tc.want)
		}
	}
	for i, want := range map[int]string{2: "call_1", 3: "call_0", 5: "call_0_3", 7: "call_0_2", 8: "call_0_4", 10: "fn_get_weather_2"} {
		if got := ids.Result(i, view[i].ToolCallID); got != want {
			t.Errorf("result %d: %q, want %q", i, got, want)
		}
	}
	if got := ids.Original("call_0_4"); got != "call_0" {
		t.Errorf("Original(call_0_4) = %q", got)
	}
	if got := ids.Original("toolu_new"); got != "toolu_new" {
		t.Errorf("Original of an ID not sent = %q", got)
	}
	again := NewCallIDs(view, anthropicID, 0)
	if again.Call(6, 1, "call_0") != ids.Call(6, 1, "call_0") {
		t.Error("the IDs differ for the same view")
	}
	grown := NewCallIDs(append(view[:len(view):len(view)], nous.AssistantMessage("", call("call_0")), nous.ToolMessage("call_0", "f", "w")), anthropicID, 0)
	for i, m := range view {
		for k := range m.ToolCalls {
			if grown.Call(i, k, "") != ids.Call(i, k, "") {
				t.Errorf("call %d of message %d changed when the view grew", k, i)
			}
		}
	}
}

func TestCallIDsMax(t *testing.T) {
	long := "call_0123456789012345678901234567890123456789"
	view := []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", nous.ToolCall{ID: long, Name: "f"}), nous.ToolMessage(long, "f", "1")}
	ids := NewCallIDs(view, anthropicID, 40)
	got := ids.Call(1, 0, long)
	if len(got) > 40 || got == long || ids.Result(2, long) != got {
		t.Errorf("a 45-byte ID with a limit of 40 is sent as %q, its result as %q", got, ids.Result(2, long))
	}
}

// A pairing problem names the message and the call once, and the way out:
// PatchDanglingToolCalls where it repairs the view, a replacement where it
// cannot.
func TestPairingSaysTheWayOut(t *testing.T) {
	dangling := nous.NewContext()
	dangling.AddMessages(nous.UserMessage("q"), nous.AssistantMessage("", nous.ToolCall{ID: "c1", Name: "f"}), nous.UserMessage("next"))
	orphan := nous.NewContext()
	orphan.AddMessages(nous.UserMessage("q"), nous.ToolMessage("zz", "f", "x"))
	for _, tc := range []struct {
		c    *nous.Context
		want string
	}{
		{dangling, `test: message 2, call "c1": a message comes before this call's result: unpaired tool call; c.PatchDanglingToolCalls() answers the calls left without a result`},
		{orphan, `test: message 1, call "zz": a tool result whose call is not open before it: unpaired tool call; replace or remove the message (c.ReplaceMessage, c.ReplaceMessageRange)`},
	} {
		err := Pairing("test", tc.c)
		var p nous.PairingError
		if err == nil || err.Error() != tc.want || !errors.Is(err, nous.ErrUnpaired) || !errors.As(err, &p) {
			t.Errorf("Pairing: %v\nwant %s", err, tc.want)
		}
	}
	if err := Pairing("test", nous.NewContext()); err != nil {
		t.Errorf("an empty view: %v", err)
	}
}

// An ID cut to fit is cut between characters: it stays valid UTF-8.
func TestCallIDsCutWholeCharacters(t *testing.T) {
	long := "a" + strings.Repeat("é", 30) // 61 bytes
	view := []nous.Message{nous.UserMessage("q"), nous.AssistantMessage("", nous.ToolCall{ID: long, Name: "f"}), nous.ToolMessage(long, "f", "1")}
	got := NewCallIDs(view, func(id string) bool { return id != "" }, 40).Call(1, 0, long)
	if len(got) > 40 || !utf8.ValidString(got) || !strings.HasPrefix(long, strings.TrimSuffix(got, "_2")) {
		t.Errorf("a 61-byte ID of two-byte characters, cut to 40: %q", got)
	}
}

func TestDistinctIDs(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		changed  []int
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, nil},
		{[]string{"call_0", "call_0"}, []string{"call_0", "call_0_2"}, []int{1}},
		{[]string{"", ""}, []string{"call_2", "call_3"}, []int{0, 1}},
		{[]string{"x", "x_2", "x"}, []string{"x", "x_2", "x_3"}, []int{2}},
	} {
		calls := make([]nous.ToolCall, len(tc.in))
		for i, id := range tc.in {
			calls[i] = nous.ToolCall{ID: id, Name: "f"}
		}
		changed := DistinctIDs(calls)
		var got []string
		for _, c := range calls {
			got = append(got, c.ID)
		}
		if !slices.Equal(got, tc.want) || !slices.Equal(changed, tc.changed) {
			t.Errorf("DistinctIDs(%q) = %q, changed %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
}
