package nous

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkFastDecode fails if fastDecode accepts data and json.Unmarshal does
// not, or decodes it differently. It returns whether fastDecode accepted it.
func checkFastDecode(t testing.TB, data []byte) bool {
	t.Helper()
	fast, ok := fastDecode(data)
	if !ok {
		return false
	}
	var std wireInput
	if err := json.Unmarshal(data, &std); err != nil {
		t.Fatalf("fastDecode accepts what encoding/json refuses (%v):\n%s", err, data)
	}
	if !reflect.DeepEqual(fast, &std) {
		t.Fatalf("fastDecode and encoding/json differ on\n%s\nfast %+v\nstd  %+v", data, fast, &std)
	}
	return true
}

// checkFastEvent is checkFastDecode for fastEvent, on data and on each
// event of data when data is a document.
func checkFastEvent(t testing.TB, data []byte) {
	t.Helper()
	check := func(b []byte) {
		fast, ok := fastEvent(b)
		if !ok {
			return
		}
		var std eventJSON
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("fastEvent accepts what encoding/json refuses (%v):\n%s", err, b)
		}
		if !reflect.DeepEqual(fast, std) {
			t.Fatalf("fastEvent and encoding/json differ on\n%s\nfast %+v\nstd  %+v", b, fast, std)
		}
	}
	check(data)
	var doc struct {
		Log struct{ Events []json.RawMessage }
	}
	if json.Unmarshal(data, &doc) == nil {
		for _, e := range doc.Log.Events {
			check(e)
		}
	}
}

func TestFastEventMatchesEncodingJSON(t *testing.T) {
	for _, s := range fastSeeds(t) {
		checkFastEvent(t, s)
	}
	taken := 0
	for _, e := range []string{
		`{"seq":1,"type":"user_message","message":{"role":"user","content":"hi"},"created_at":"2025-01-02T03:04:05Z"}`,
		` {"seq":2,"type":"turn_end","data":{"input_tokens":3},"created_at":"2025-01-02T03:04:05.5+02:00"} `,
		`{"seq":3,"type":"replace","first":1,"last":2,"message":{"role":"user","content":"c","parts":[],"tool_calls":[{"id":"a","name":"b","arguments":{"x" : 1}}]},"created_at":"2025-01-02T03:04:05Z"}`,
		`{"seq":1,"Type":"user_message"}`,
		`{"seq":1,"seq":2}`,
		`{"seq":1}x`,
		`null`,
	} {
		checkFastEvent(t, []byte(e))
		if _, ok := fastEvent([]byte(e)); ok {
			taken++
		}
	}
	if taken != 3 {
		t.Errorf("the fast path took %d of the events, want the 3 well-formed ones", taken)
	}
}

// fastSeeds returns documents that exercise every field of the format:
// the golden files and the serialized forms of a few contexts.
func fastSeeds(t testing.TB) [][]byte {
	t.Helper()
	var seeds [][]byte
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.golden.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	c := NewContext(WithDeps(map[string]any{"n": 1, "list": []any{"a", 2.5, true, nil}}))
	c.SystemPrompt = "sys \"quoted\"\n\u2028 é"
	for _, m := range []Message{
		{Role: RoleUser, Content: "plain"},
		{Role: RoleAssistant, ReasoningContent: "hmm", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a": [1, 2]}`), Metadata: map[string]any{"sig": "x"}}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "{\"ok\":true}\t\x01"},
		{Role: RoleUser, Parts: []ContentPart{TextPart("t"), {Type: PartImage, Content: "aGk=", Options: map[string]any{"media_type": "image/png"}}}, Metadata: map[string]any{}},
	} {
		if err := c.AddMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.LogEvent(EventTurnEnd, map[string]any{"input_tokens": 3}); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplaceMessageRange(0, 1, Message{Role: RoleUser, Content: "[compacted]"}); err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	d.MaxIterations = 7
	for _, ctx := range []*Context{c, d, NewContext()} {
		b, err := ctx.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	seeds := fastSeeds(t)
	for i, s := range seeds {
		// Every document Serialize writes, or that is written like one,
		// takes the fast path; otherwise it would never be exercised.
		if !checkFastDecode(t, s) {
			t.Errorf("seed %d is left to encoding/json:\n%s", i, s)
		}
	}
	base := string(seeds[len(seeds)-3])
	for _, tc := range []struct {
		name string
		doc  string
		fast bool // whether the fast path should take it
	}{
		{"as written", base, true},
		{"unknown key", strings.Replace(base, `"version":2`, `"version":2,"extra":{"a":[1,-2.5e3,"x"]}`, 1), true},
		{"escaped key", strings.Replace(base, `"system_prompt"`, `"system_\u0070rompt"`, 1), true},
		{"escapes", strings.Replace(base, `"plain"`, `"\ud83d\ude00 \ud800 x \udc00\u00e9\/\b\f"`, 1), true},
		{"invalid UTF-8", strings.Replace(base, `"plain"`, "\"a\xff\xfeb\xed\xa0\x80\"", 1), true},
		{"white space", strings.ReplaceAll(base, `,"`, " ,\n\t\"") + "\r\n", true},
		{"case-folded key", strings.Replace(base, `"system_prompt"`, `"System_Prompt"`, 1), false},
		{"folded by Unicode", strings.Replace(base, `"system_prompt"`, `"ſystem_prompt"`, 1), false},
		{"duplicate key", strings.Replace(base, `"version":2`, `"version":2,"version":2`, 1), false},
		{"null field", strings.Replace(base, `"agent_name":""`, `"agent_name":null`, 1), false},
		{"version 1", strings.Replace(base, `"version":2`, `"version":1`, 1), false},
		{"float seq", strings.Replace(base, `"seq":1,`, `"seq":1.0,`, 1), false},
		{"leading zero", strings.Replace(base, `"seq":1,`, `"seq":01,`, 1), false},
		{"overflow", strings.Replace(base, `"seq":1,`, `"seq":9223372036854775808,`, 1), false},
		{"bad escape", strings.Replace(base, `"plain"`, `"\x"`, 1), false},
		{"control character", strings.Replace(base, `"plain"`, "\"a\nb\"", 1), false},
		{"trailing data", base + "{}", false},
		{"truncated", base[:len(base)-2], false},
		{"bad time", replaceLast(base, `"created_at":"`, `"created_at":"x`), false},
		{"null raw fields", replaceLast(base, `"deps":{`, `"deps":null,"x":{`), true},
		{"string number", strings.Replace(base, `"seq":1,`, `"seq":"1",`, 1), false},
		{"bad literal", strings.Replace(base, `"needs_response":true`, `"needs_response":tru`, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkFastDecode(t, []byte(tc.doc)); got != tc.fast {
				t.Errorf("fast path taken: %v, want %v", got, tc.fast)
			}
		})
	}
}

func replaceLast(s, old, new string) string {
	i := strings.LastIndex(s, old)
	return s[:i] + new + s[i+len(old):]
}

// FuzzFastDecode checks fastDecode against encoding/json on any input:
// whatever it accepts, encoding/json accepts and decodes the same way.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastDecode(t, data)
		checkFastEvent(t, data)
	})
}

// Deserialize's result is the same whichever path decodes the document.
func TestFastDecodeSameContext(t *testing.T) {
	for i, s := range fastSeeds(t) {
		w, ok := fastDecode(s)
		if !ok {
			t.Fatalf("seed %d not taken by the fast path", i)
		}
		fast, err := restoreV2(w)
		if err != nil {
			t.Fatal(err)
		}
		std, err := deserializeJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		a, err := fast.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		b, err := std.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("seed %d: the paths restore different contexts:\n%s\n%s", i, a, b)
		}
	}
}
