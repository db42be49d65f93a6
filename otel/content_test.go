package nousotel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
	"github.com/nous-go/nous/storetest"
)

// Without WithContent, no span carries what the conversation said.
func TestNoContentByDefault(t *testing.T) {
	tr, rec := recorder()
	c := recorded(t)
	tr.ExportContext(context.Background(), c)
	texts := []string{"Paris", "Lisbon", "weather assistant", "Summary"}
	for _, s := range spans(t, rec) {
		for k, v := range s.Attrs {
			for _, text := range texts {
				if strings.Contains(v.String(), text) {
					t.Errorf("%s: %s holds %q without WithContent", s.Name, k, text)
				}
			}
		}
	}
}

// With WithContent, a chat span has the system prompt, the messages new
// to the call and the reply, and a tool span its arguments and result,
// as the conventions' JSON schemas have them.
func TestContentMessages(t *testing.T) {
	tr, rec := recorder(nousotel.WithContent())
	c := nous.NewContext(nous.WithSystemPrompt("Be brief."))
	stop := tr.Observe(context.Background(), c)
	runLoop(t, c)
	stop()
	got := spans(t, rec)
	chats, tools := ofOperation(got, "chat"), ofOperation(got, "execute_tool")
	if len(chats) != 4 || len(tools) != 2 {
		t.Fatalf("%d chat spans and %d tool spans, want 4 and 2", len(chats), len(tools))
	}
	jsonAttr(t, chats[0], "gen_ai.system_instructions", `[{"type":"text","content":"Be brief."}]`)
	jsonAttr(t, chats[0], "gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Weather and time in Paris?"}]}]`)
	jsonAttr(t, chats[0], "gen_ai.output.messages", `[{"role":"assistant","parts":[
		{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris"}},
		{"type":"tool_call","id":"c2","name":"get_time","arguments":{"zone":"CET"}}],"finish_reason":"tool_use"}]`)
	jsonAttr(t, chats[1], "gen_ai.input.messages", `[
		{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"18°C"}]},
		{"role":"tool","parts":[{"type":"tool_call_response","id":"c2","response":"no clock"}]}]`)
	jsonAttr(t, chats[1], "gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"18°C; the time is unknown."}],"finish_reason":"end_turn"}]`)
	if _, has := chats[2].Attrs["gen_ai.output.messages"]; has {
		t.Error("a call that gave no reply has output messages")
	}
	jsonAttr(t, chats[3], "gen_ai.input.messages", `[]`)
	jsonAttr(t, chats[3], "gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Rain."}],"finish_reason":"stop"}]`)
	jsonAttr(t, tools[0], "gen_ai.tool.call.arguments", `{"city":"Paris"}`)
	jsonAttr(t, tools[0], "gen_ai.tool.call.result", `"18°C"`)
	if tools[1].Desc != "no clock" {
		t.Errorf("a tool's error with content: %q", tools[1].Desc)
	}
}

// jsonAttr checks that s's attribute k is a string holding the JSON want.
func jsonAttr(t *testing.T, s span, k, want string) {
	t.Helper()
	v, has := s.Attrs[k]
	if !has || v.Type() != attribute.STRING {
		t.Errorf("%s: %s = %v, want a string", s.Name, k, v.String())
		return
	}
	var g, w any
	if err := json.Unmarshal([]byte(v.AsString()), &g); err != nil {
		t.Errorf("%s: %s is not JSON: %v", s.Name, k, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("%s: %s =\n%s\nwant\n%s", s.Name, k, gb, wb)
	}
}

type clientConfig struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// No secret is in any attribute, with or without content, live or
// exported: not the deps' secrets wherever the conversation repeats
// them, nor the values of secret keys in a call's arguments or a tool's
// result, at any depth, nor what the context's own rule names.
func TestContentRedacted(t *testing.T) {
	secrets := map[string]string{
		"a dep's key":                  "sk-live-0123456789",
		"a nested password":            "hunter2-correct-horse",
		"a typed map's token":          "tok-in-a-map-of-strings",
		"a struct's secret":            "client-secret-in-a-struct",
		"an argument's password":       "pw-in-the-arguments",
		"a result's nested credential": "cred-in-the-result",
		"the context's own rule":       "internal-codename-x1",
		"a secret set by a tool":       "sk-set-by-a-tool-42",
	}
	newContext := func() *nous.Context {
		return nous.NewContext(
			nous.WithSystemPrompt("Use the key "+secrets["a dep's key"]+" for the weather API."),
			nous.WithRedaction(func(k string) bool { return nous.IsSecretKey(k) || k == "codename" }),
			nous.WithDeps(map[string]any{
				"weather_api_key": secrets["a dep's key"],
				"db":              map[string]any{"host": "db.local", "password": secrets["a nested password"]},
				"headers":         map[string]string{"auth_token": secrets["a typed map's token"]},
				"oauth":           clientConfig{ClientID: "app-1", ClientSecret: secrets["a struct's secret"]},
				"codename":        secrets["the context's own rule"],
			}))
	}
	turn := func(t *testing.T, c *nous.Context) {
		t.Helper()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(c.AddMessage(nous.UserMessage("My key is " + secrets["a dep's key"] + "; log in to the db.")))
		call := nous.ToolCall{ID: "c1", Name: "login", Arguments: []byte(`{"user":"ann","password":"` + secrets["an argument's password"] + `","opts":{"note":"codename ` + secrets["the context's own rule"] + `"}}`)}
		must(c.AddMessage(nous.AssistantMessage("Logging in with "+secrets["a nested password"]+".", call)))
		c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: ""})
		must(c.RunToolCalls(context.Background(), []nous.ToolCall{call}, func(context.Context, nous.RunContext) nous.ToolResult {
			return nous.ToolResult{
				Content: `{"ok":true,"session":{"credential":"` + secrets["a result's nested credential"] + `"},"echo":"` + secrets["a typed map's token"] + ` ` + secrets["a struct's secret"] + `"}`,
				Update:  nous.NewContextUpdate().Set("new_api_key", secrets["a secret set by a tool"]),
			}
		}))
		must(c.AddMessage(nous.AssistantMessage("Logged in; your new key is " + secrets["a secret set by a tool"] + ".")))
		c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: "it said " + secrets["a dep's key"]})
	}
	check := func(t *testing.T, got []span, wantContent bool) {
		t.Helper()
		if len(got) == 0 {
			t.Fatal("no spans")
		}
		content := false
		for _, s := range got {
			for k, v := range s.Attrs {
				text := v.String()
				content = content || strings.Contains(text, "log in to the db")
				for what, secret := range secrets {
					if strings.Contains(text, secret) {
						t.Errorf("%s: %s holds %s: %s", s.Name, k, what, text)
					}
				}
			}
			for what, secret := range secrets {
				if strings.Contains(s.Desc, secret) {
					t.Errorf("%s: the status holds %s: %s", s.Name, what, s.Desc)
				}
			}
		}
		if content != wantContent {
			t.Errorf("content recorded: %v, want %v", content, wantContent)
		}
	}
	for _, withContent := range []bool{false, true} {
		var opts []nousotel.Option
		if withContent {
			opts = append(opts, nousotel.WithContent())
		}
		t.Run(map[bool]string{false: "no content", true: "content"}[withContent], func(t *testing.T) {
			live, liveRec := recorder(opts...)
			c := newContext()
			stop := live.Observe(context.Background(), c)
			turn(t, c)
			stop()
			check(t, spans(t, liveRec), withContent)
			if withContent {
				tools := ofOperation(spans(t, liveRec), "execute_tool")
				jsonAttr(t, tools[0], "gen_ai.tool.call.arguments", `{"user":"ann","password":"[REDACTED]","opts":{"note":"codename [REDACTED]"}}`)
			}

			exp, expRec := recorder(opts...)
			exp.ExportContext(context.Background(), c)
			check(t, spans(t, expRec), withContent)

			// A stored session has no deps' secrets to look for (what the
			// user typed is in its messages, as the store keeps them) and
			// no rule of its own: the tracer's rule names its keys.
			store := storetest.NewMemory()
			if err := c.Save(context.Background(), store); err != nil {
				t.Fatal(err)
			}
			stored, storedRec := recorder(append(opts, nousotel.WithRedaction(func(k string) bool { return nous.IsSecretKey(k) || k == "codename" }))...)
			c2, err := nous.Load(context.Background(), store, c.Log().ID())
			if err != nil {
				t.Fatal(err)
			}
			stored.ExportContext(context.Background(), c2)
			for _, s := range spans(t, storedRec) {
				for k, v := range s.Attrs {
					for _, what := range []string{"an argument's password", "a result's nested credential"} {
						if strings.Contains(v.String(), secrets[what]) {
							t.Errorf("stored: %s: %s holds %s", s.Name, k, what)
						}
					}
				}
			}
		})
	}
}
