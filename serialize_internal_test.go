package nous

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var (
	goldenID     = uuid.MustParse("01890a5d-ac96-774b-bcce-b302099a8057")
	goldenParent = uuid.MustParse("01890a5d-ac96-774b-bcce-b302099a8000")
	goldenT0     = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
)

func goldenAt(n int) time.Time { return goldenT0.Add(time.Duration(n) * time.Minute) }

// goldenContexts builds the deterministic contexts of the golden files.
func goldenContexts(t *testing.T) map[string]*Context {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*Context{}

	out["v2_empty"] = func() *Context {
		c := NewContext()
		c.StartedAt = time.Time{}
		FreezeForTest(c, goldenID, uuid.Nil, goldenT0, false)
		return c
	}()

	out["v2_basic"] = func() *Context {
		c := NewContext(
			WithSystemPrompt("You are terse."),
			WithAgentName("planner"),
			WithMaxIterations(5),
			WithDeps(map[string]any{
				"user_id":       42,
				"ratio":         0.25,
				"tags":          []any{"a", "b"},
				"profile":       map[string]any{"name": "Ada", "API_Key": "sk-hidden", "prefs": map[string]any{"theme": "dark", "refresh_token": "hidden"}},
				"OpenAI_ApiKey": "sk-hidden",
				"note":          "<b>html & stays</b>",
			}),
			WithUsage(Usage{Requests: 2, ToolCalls: 1, InputTokens: 120, OutputTokens: 80, TotalTokens: 200,
				CacheCreationInputTokens: 10, CacheReadInputTokens: 20, ReasoningTokens: 30}),
		)
		c.StartedAt = goldenT0
		c.Iteration = 2
		must(c.AddMessages(
			Message{Role: RoleSystem, Content: "Be helpful.", CreatedAt: goldenAt(1)},
			Message{Role: RoleUser, Content: "Weather in Paris?", CreatedAt: goldenAt(2)},
		))
		must(c.LogEvent(EventTurnStart, map[string]any{"turn": 1}))
		must(c.LogEvent(EventRequestHeader, map[string]any{"x-request-id": "req-1", "Authorization": "Bearer hidden"}))
		call := ToolCall{ID: "call_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris","when":"<today>"}`),
			Metadata: map[string]any{"thought_signature": "c2lnbmF0dXJl"}}
		must(c.AddMessage(Message{Role: RoleAssistant, ReasoningContent: "Look it up.", ToolCalls: []ToolCall{call},
			Parts:     []ContentPart{ThinkingPart("I should call the tool.", "EqQBCkYIARgCKkD+/sig==")},
			Metadata:  map[string]any{"model": "m-1", "usage": map[string]any{"output_tokens": 12}},
			CreatedAt: goldenAt(3)}))
		c.AddToolCall(call)
		must(c.AddMessage(Message{Role: RoleTool, ToolCallID: "call_1", Name: "weather", Content: `{"temp_c":18}`, CreatedAt: goldenAt(4)}))
		must(c.AddMessage(Message{Role: RoleUser, CreatedAt: goldenAt(5), Parts: []ContentPart{
			TextPart("And this picture?"),
			{Type: PartImage, Content: "aGVsbG8=", Options: map[string]any{"media_type": "image/png"}},
			ImageURLPart("https://example.com/a.png"),
		}}, WithSource("memory")))
		must(c.AddMessage(Message{Role: RoleAssistant, Content: "Sunny, 18 °C.", CreatedAt: goldenAt(6)}))
		must(c.LogEvent(EventTurnEnd, map[string]any{"turn": 1, "elapsed_ms": 1500}))
		c.SetSystemPromptOverlay("never written")
		FreezeForTest(c, goldenID, uuid.Nil, goldenT0, false)
		return c
	}()

	out["v2_replacements"] = func() *Context {
		c := NewContext(WithSystemPrompt("compacting"))
		c.StartedAt = goldenT0
		for i := range 6 {
			role := RoleUser
			if i%2 == 1 {
				role = RoleAssistant
			}
			must(c.AddMessage(Message{Role: role, Content: strings.Repeat("x", i+1), CreatedAt: goldenAt(i)}))
		}
		must(c.ReplaceMessageRange(1, 3, Message{Role: RoleAssistant, Content: "summary of 1..3"}))
		must(c.ReplaceMessage(0, Message{Role: RoleUser, Content: "edited first"}))
		must(c.ReplaceMessageRange(0, 1, Message{Role: RoleUser, Content: "summary of the summary"}))
		must(c.AddMessage(Message{Role: RoleUser, Content: "after", CreatedAt: goldenAt(10)}))
		FreezeForTest(c, goldenID, uuid.Nil, goldenT0, false)
		return c
	}()

	out["v2_fork"] = func() *Context {
		p := NewContext()
		p.StartedAt = goldenT0
		must(p.AddMessage(Message{Role: RoleUser, Content: "shared", CreatedAt: goldenAt(1)}))
		must(p.AddMessage(Message{Role: RoleAssistant, Content: "shared too", CreatedAt: goldenAt(2)}))
		FreezeForTest(p, goldenParent, uuid.Nil, goldenT0, false)
		c := p.Clone()
		must(p.AddMessage(Message{Role: RoleUser, Content: "parent only", CreatedAt: goldenAt(3)}))
		must(c.AddMessage(Message{Role: RoleUser, Content: "fork only", CreatedAt: goldenAt(4)}))
		must(c.ReplaceMessage(1, Message{Role: RoleAssistant, Content: "fork's edit"}))
		FreezeForTest(c, goldenID, goldenParent, goldenT0, false)
		return c
	}()
	return out
}

// TestGolden checks what Serialize writes against testdata/*.golden.json,
// and that each golden file reads back and writes again byte for byte.
// go test -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	for name, c := range goldenContexts(t) {
		t.Run(name, func(t *testing.T) {
			got, err := c.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", name+".golden.json"), got)

			r, err := Deserialize(got)
			if err != nil {
				t.Fatal(err)
			}
			CheckRestoredForTest(t, r)
			again, err := r.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, got) {
				t.Errorf("re-encode differs:\n%s\nwant\n%s", again, got)
			}
		})
	}
}

// TestGoldenV1 reads the version 1 fixtures under testdata/v1/ and checks
// what they restore to, written as version 2 with the restore time frozen.
func TestGoldenV1(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "v1", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no version 1 fixtures: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.json") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Deserialize(data)
			if err != nil {
				t.Fatal(err)
			}
			CheckRestoredForTest(t, c)
			if c.log.id == goldenID || c.log.id == uuid.Nil {
				t.Fatalf("a version 1 blob must get a new log ID, got %v", c.log.id)
			}
			FreezeForTest(c, goldenID, uuid.Nil, goldenT0, true)
			got, err := c.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "v1", name+".restored.golden.json"), got)
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("Serialize wrote invalid JSON: %v", err)
	}
	pretty.WriteByte('\n')
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, pretty.Bytes())
	}
}

// writeDocument streams the document one value at a time; it must write
// exactly what encoding/json writes for the whole document.
func TestWriteDocumentMatchesEncodingJSON(t *testing.T) {
	base := NewContext(WithSystemPrompt("s <&>"), WithDeps(map[string]any{"k": []any{1, "two"}}))
	for i := range 40 {
		if err := base.AddMessage(UserMessage(fmt.Sprint("q ", i))); err != nil {
			t.Fatal(err)
		}
		if err := base.LogEvent(EventStepStart, map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := base.ReplaceMessageRange(2, 9, AssistantMessage("summary")); err != nil {
		t.Fatal(err)
	}
	fork := base.Clone()
	if err := fork.AddMessages(
		AssistantMessage("fork", ToolCall{ID: "c", Name: "f", Arguments: []byte(`{"a":"<b>"}`)}),
		Message{Role: RoleTool, ToolCallID: "c", Name: "f", Content: "done", Metadata: map[string]any{"ms": 3}},
		Message{Role: RoleUser, Content: "see", Parts: []ContentPart{ImageURLPart("u"), {Type: PartImage, Content: "AA==", Options: map[string]any{"media_type": "image/png"}}}},
		Message{Role: RoleUser, Parts: []ContentPart{TextPart("only parts")}},
		Message{Role: RoleAssistant, ReasoningContent: "hm"},
	); err != nil {
		t.Fatal(err)
	}
	// The messages projection in the shape of version 1, as encoding/json
	// writes it: always six keys, content a string, a list of parts (Content
	// first, as a text part) or null.
	type v1Shape struct {
		Role       Role           `json:"role"`
		Content    any            `json:"content"`
		ToolCalls  []ToolCall     `json:"tool_calls"`
		ToolCallID *string        `json:"tool_call_id"`
		Name       *string        `json:"name"`
		Metadata   map[string]any `json:"metadata"`
	}
	nonEmpty := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for name, c := range map[string]*Context{"zero": {}, "new": NewContext(), "base": base, "fork": fork} {
		c.ready()
		w := c.document(newSanitizer(nil))
		var streamed, whole bytes.Buffer
		if err := writeDocument(&streamed, &w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shaped := struct {
			Version  int       `json:"version"`
			Messages []v1Shape `json:"messages"`
			document
		}{Version: w.Version, Messages: []v1Shape{}, document: w}
		for _, m := range w.Messages {
			v := v1Shape{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: nonEmpty(m.ToolCallID), Name: nonEmpty(m.Name), Metadata: m.Metadata}
			switch {
			case len(m.Parts) > 0 && m.Content != "":
				v.Content = append([]ContentPart{TextPart(m.Content)}, m.Parts...)
			case len(m.Parts) > 0:
				v.Content = m.Parts
			case m.Content != "":
				v.Content = m.Content
			}
			if v.ToolCalls == nil {
				v.ToolCalls = []ToolCall{}
			}
			if v.Metadata == nil {
				v.Metadata = map[string]any{}
			}
			shaped.Messages = append(shaped.Messages, v)
		}
		enc := json.NewEncoder(&whole)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&shaped); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := bytes.TrimSuffix(whole.Bytes(), []byte("\n")); !bytes.Equal(streamed.Bytes(), want) {
			t.Errorf("%s: writeDocument wrote\n%s\nencoding/json writes\n%s", name, streamed.Bytes(), want)
		}
	}
}

// Serialize sizes its buffer from the document's estimate: an estimate below the
// output makes the buffer grow, copying everything written so far, and one
// far above it wastes memory. Maps are not counted, so these contexts have
// none.
func TestSerializeSizeEstimate(t *testing.T) {
	conversation := func(n int) *Context {
		c := NewContext()
		for i := range n {
			var m Message
			switch i % 4 {
			case 0:
				m = Message{Role: RoleUser, Content: fmt.Sprintf("Question %d: what is the weather in Paris today?", i)}
			case 1:
				m = Message{Role: RoleAssistant, ReasoningContent: "Let me look.", ToolCalls: []ToolCall{{
					ID: fmt.Sprintf("call_%d", i), Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}}
			case 2:
				m = Message{Role: RoleTool, ToolCallID: fmt.Sprintf("call_%d", i-1), Name: "get_weather", Content: `{"temp_c":21,"sky":"clear"}`}
			case 3:
				m = Message{Role: RoleAssistant, Parts: []ContentPart{TextPart("It is \"clear\",\n21 °C."), {Type: PartImageURL, Content: "https://example.com/sky.png"}}}
			}
			if err := c.AddMessage(m); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	short := conversation(1)
	replaced := conversation(2000)
	// Every other tool-call group (a call at 4k+1, its result at 4k+2) by
	// one message, from the end so the indices before stay put.
	for i := 1 + 4*((replaced.Len()-3)/4); i >= 1; i -= 8 {
		if err := replaced.ReplaceMessageRange(i, i+1, Message{Role: RoleUser, Content: "[compacted]"}); err != nil {
			t.Fatal(err)
		}
	}
	// Maps: thinking and thought signatures, metadata, event data, deps.
	sig := strings.Repeat("EqQBCkYIARgCKkD+", 250)
	maps := NewContext(WithDeps(map[string]any{"todos": []any{strings.Repeat("write the tests ", 100), map[string]any{"done": true, "n": 3}}}))
	for i := range 200 {
		if err := maps.AddMessage(Message{Role: RoleAssistant, Parts: []ContentPart{ThinkingPart("hm", sig)},
			ToolCalls: []ToolCall{{ID: fmt.Sprint("c", i), Name: "f", Metadata: map[string]any{"thought_signature": sig}}},
			Metadata:  map[string]any{"model": "m-1", "usage": map[string]any{"output_tokens": 12}}}); err != nil {
			t.Fatal(err)
		}
		if err := maps.LogEvent(EventRequestHeader, map[string]any{"x-request-id": sig[:64], "list": []any{1, 2.5, nil, "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	prompted := NewContext(WithSystemPrompt(strings.Repeat("You are a careful assistant. ", 400)), WithAgentName("researcher"))
	for name, c := range map[string]*Context{"one message": short, "plain": conversation(2000), "replaced": replaced, "empty": NewContext(), "maps": maps, "long system prompt": prompted} {
		c.ready()
		d := c.document(newSanitizer(nil))
		size := d.size()
		out, err := c.Serialize()
		if err != nil {
			t.Fatal(err)
		}
		if ratio := float64(size) / float64(len(out)); ratio < 1 || ratio > 1.5 {
			t.Errorf("%s: estimate %d for %d bytes written (%.2fx), want 1x to 1.5x", name, size, len(out), ratio)
		}
	}
}
