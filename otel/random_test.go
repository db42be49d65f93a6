package nousotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/nous-go/nous"
	nousotel "github.com/nous-go/nous/otel"
	"github.com/nous-go/nous/storetest"
)

// conventions are the attributes the spans may carry, with the types the
// GenAI semantic conventions of version 1.41.0 give them (content ones,
// typed any there, as JSON strings).
var conventions = map[attribute.Key]attribute.Type{
	semconv.GenAIOperationNameKey:                 attribute.STRING,
	semconv.GenAIConversationIDKey:                attribute.STRING,
	semconv.GenAIAgentNameKey:                     attribute.STRING,
	semconv.GenAIProviderNameKey:                  attribute.STRING,
	semconv.GenAIRequestModelKey:                  attribute.STRING,
	semconv.GenAIResponseModelKey:                 attribute.STRING,
	semconv.GenAIResponseFinishReasonsKey:         attribute.STRINGSLICE,
	semconv.GenAIUsageInputTokensKey:              attribute.INT64,
	semconv.GenAIUsageOutputTokensKey:             attribute.INT64,
	semconv.GenAIUsageCacheReadInputTokensKey:     attribute.INT64,
	semconv.GenAIUsageCacheCreationInputTokensKey: attribute.INT64,
	semconv.GenAIUsageReasoningOutputTokensKey:    attribute.INT64,
	semconv.GenAIToolNameKey:                      attribute.STRING,
	semconv.GenAIToolCallIDKey:                    attribute.STRING,
	semconv.GenAIToolTypeKey:                      attribute.STRING,
	semconv.ErrorTypeKey:                          attribute.STRING,
	semconv.GenAISystemInstructionsKey:            attribute.STRING,
	semconv.GenAIInputMessagesKey:                 attribute.STRING,
	semconv.GenAIOutputMessagesKey:                attribute.STRING,
	semconv.GenAIToolCallArgumentsKey:             attribute.STRING,
	semconv.GenAIToolCallResultKey:                attribute.STRING,
}

// required are the attributes each operation's spans always carry.
var required = map[string][]attribute.Key{
	"invoke_agent": {semconv.GenAIOperationNameKey, semconv.GenAIConversationIDKey},
	"chat":         {semconv.GenAIOperationNameKey, semconv.GenAIConversationIDKey},
	"execute_tool": {semconv.GenAIOperationNameKey, semconv.GenAIConversationIDKey, semconv.GenAIToolCallIDKey, semconv.GenAIToolTypeKey},
}

// Random sessions made of the library's own operations (turns with and
// without bounds, replies with and without steps, failed and cut calls,
// parallel tools with failures, patched calls, replacements, calls
// recorded by hand, saves, each of which ends with a batch event), traced
// live and exported from a store: both give the same spans, and those spans keep to the conventions: every
// attribute by its name and type, every span in a turn and within its
// times, a chat span per model call, an execute_tool span per result,
// the usage of the steps, and every span that starts ends.
func TestRandomSessions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for i := range 60 {
		s := seed + uint64(i)
		t.Run(fmt.Sprint("seed=", s), func(t *testing.T) {
			r := rand.New(rand.NewPCG(s, 0))
			opts := []nousotel.Option{nousotel.WithAgentName("a")}
			if r.IntN(2) == 0 {
				opts = append(opts, nousotel.WithContent())
			}
			live, liveRec := recorder(opts...)
			c := nous.NewContext(nous.WithSystemPrompt("p"), nous.WithDeps(map[string]any{"api_key": "sk-random-secret"}))
			store := storetest.NewMemory()
			stop := live.Observe(context.Background(), c)
			randomSession(t, r, c, store)
			stop()
			got := spans(t, liveRec)
			if len(liveRec.Started()) != len(liveRec.Ended()) {
				t.Errorf("%d spans started, %d ended", len(liveRec.Started()), len(liveRec.Ended()))
			}
			checkSpans(t, c, got)

			if err := c.Save(context.Background(), store); err != nil {
				t.Fatal(err)
			}
			back, err := nous.Load(context.Background(), store, c.Log().ID())
			if err != nil {
				t.Fatal(err)
			}
			back.SystemPrompt = c.SystemPrompt
			back.Deps = c.Deps // as the process that traced it live had them
			exp, expRec := recorder(opts...)
			exp.ExportContext(context.Background(), back)
			sameSpans(t, got, spans(t, expRec))
		})
	}
}

// randomSession runs random operations on c, saving it to store now and
// then.
func randomSession(t *testing.T, r *rand.Rand, c *nous.Context, store nous.Store) {
	t.Helper()
	ctx := context.Background()
	explicit := false
	var open []nous.ToolCall // calls the view waits for
	n := 0
	id := func() string { n++; return fmt.Sprint("call_", n) }
	step := func(err string) {
		in := r.IntN(500)
		c.EndStep(nous.Step{Provider: []string{"openai", "anthropic", "gemini", ""}[r.IntN(4)], Model: []string{"m1", ""}[r.IntN(2)], Error: err,
			Usage: nous.Usage{Requests: 1, InputTokens: in, OutputTokens: r.IntN(50), CacheReadInputTokens: r.IntN(in + 1), ReasoningTokens: r.IntN(3)}})
	}
	for range 20 + r.IntN(40) {
		var err error
		switch k := r.IntN(14); {
		case k == 0 && !explicit:
			err, explicit = c.LogEvent(nous.EventTurnStart, nil), true
		case k == 0:
			err, explicit = c.LogEvent(nous.EventTurnEnd, nil), false
		case k == 1:
			err = c.LogEvent(nous.EventStepStart, nil)
		case k <= 3 && len(open) == 0:
			err = c.AddMessage(nous.UserMessage(fmt.Sprint("question ", r.IntN(100))))
		case k <= 6 && len(open) == 0:
			var calls []nous.ToolCall
			for range r.IntN(4) {
				calls = append(calls, nous.ToolCall{ID: id(), Name: []string{"f", "g"}[r.IntN(2)], Arguments: []byte(`{"x":1,"token":"sk-random-secret"}`)})
			}
			reply := nous.AssistantMessage(fmt.Sprint("answer ", r.IntN(100)), calls...)
			reply.Metadata = map[string]any{"model": "m1-2026", "finish_reason": "stop"}
			if r.IntN(8) == 0 {
				reply.Metadata[nous.MetadataInterrupted] = true
			}
			err = c.AddMessage(reply)
			if r.IntN(5) != 0 {
				step("")
			}
			open = calls
		case k == 7:
			step("the reply stopped")
		case k <= 9 && len(open) > 0:
			err = c.RunToolCalls(ctx, open, func(_ context.Context, rc nous.RunContext) nous.ToolResult {
				if rc.Call.Name == "g" {
					return nous.ToolResult{Err: errors.New("g failed")}
				}
				return nous.ToolResult{Content: `{"ok":true}`}
			})
			open = nil
		case k == 10 && len(open) > 0:
			c.PatchDanglingToolCalls()
			open = nil
		case k == 10 && c.Len() > 1:
			err = c.ReplaceMessage(r.IntN(c.Len()-1), nous.UserMessage("summary"))
			if errors.Is(err, nous.ErrUnpaired) {
				err = nil // a call or a result replaced: refused, and nothing changed
			}
		case k == 11:
			c.AddToolCall(nous.ToolCall{ID: id(), Name: "by_hand"})
		case k >= 12:
			err = c.Save(ctx, store)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkSpans checks the spans of c's log against the conventions and
// against the log.
func checkSpans(t *testing.T, c *nous.Context, got []span) {
	t.Helper()
	conv := c.Log().ID().String()
	counts := map[string]int{}
	usage := 0
	for i, s := range got {
		op := s.Attrs["gen_ai.operation.name"].AsString()
		counts[op]++
		for k, v := range s.Attrs {
			want, known := conventions[attribute.Key(k)]
			if !known || v.Type() != want {
				t.Errorf("span %d (%s): %s is %s; the conventions have it %v (known %v)", i, s.Name, k, v.Type(), want, known)
			}
			if strings.Contains(v.String(), "sk-random-secret") {
				t.Errorf("span %d (%s): %s holds the secret", i, s.Name, k)
			}
			if strings.HasPrefix(k, "gen_ai.") && strings.HasSuffix(k, "messages") {
				var msgs []struct {
					Role  string `json:"role"`
					Parts []any  `json:"parts"`
				}
				if err := json.Unmarshal([]byte(v.AsString()), &msgs); err != nil {
					t.Errorf("span %d: %s is not a list of messages: %v", i, k, err)
				}
				for _, m := range msgs {
					if m.Role == "" || m.Parts == nil {
						t.Errorf("span %d: %s has a message with no role or parts: %s", i, k, v.AsString())
					}
				}
			}
		}
		for _, k := range required[op] {
			if _, has := s.Attrs[string(k)]; !has {
				t.Errorf("span %d (%s) has no %s", i, s.Name, k)
			}
		}
		if s.Attrs["gen_ai.conversation.id"].AsString() != conv {
			t.Errorf("span %d (%s) is of conversation %q, not %q", i, s.Name, s.Attrs["gen_ai.conversation.id"].AsString(), conv)
		}
		if s.End.Before(s.Start) {
			t.Errorf("span %d (%s) ends before it starts", i, s.Name)
		}
		switch op {
		case "invoke_agent":
			if s.Parent != -1 || s.Kind.String() != "internal" {
				t.Errorf("turn %d has parent %d, kind %s", i, s.Parent, s.Kind)
			}
		case "chat", "execute_tool":
			if s.Parent < 0 || ofOperation(got[s.Parent:s.Parent+1], "invoke_agent") == nil {
				t.Errorf("span %d (%s) is not in a turn: parent %d", i, s.Name, s.Parent)
				continue
			}
			p := got[s.Parent]
			if s.Start.Before(p.Start) || s.End.After(p.End) {
				t.Errorf("span %d (%s) runs %s..%s, out of its turn's %s..%s", i, s.Name, s.Start, s.End, p.Start, p.End)
			}
			if op == "chat" {
				usage += int(s.Attrs["gen_ai.usage.input_tokens"].AsInt64())
			}
		default:
			t.Errorf("span %d (%s) has operation %q", i, s.Name, op)
		}
	}

	calls, results, steps := logCalls(c)
	if counts["chat"] != calls || counts["execute_tool"] != results {
		t.Errorf("%d chat and %d execute_tool spans; the log has %d model calls and %d tool results", counts["chat"], counts["execute_tool"], calls, results)
	}
	if usage != steps || steps != c.Usage.InputTokens {
		t.Errorf("the chat spans count %d input tokens, the steps %d, the context %d", usage, steps, c.Usage.InputTokens)
	}
}

// logCalls returns what c's log says there is: its model calls, its tool
// results, and the input tokens of its steps.
func logCalls(c *nous.Context) (calls, results, steps int) {
	pending, cut := false, false // a reply waiting for its step; a step that failed with none
	for e := range c.Log().All() {
		if e.Type == nous.EventBatch {
			continue // a save's: no event of the run
		}
		wasCut := cut
		cut = false
		switch e.Type {
		case nous.EventStepEnd:
			st, _ := nous.StepOf(e)
			calls++
			cut = !pending
			pending = false
			steps += st.Usage.InputTokens
		case nous.EventAssistantMessage:
			if wasCut && e.Message.Interrupted() {
				break // the failed call's partial reply, added after it
			}
			if pending {
				calls++
			}
			pending = true
		case nous.EventToolResult:
			results++
			fallthrough
		case nous.EventTurnStart, nous.EventTurnEnd, nous.EventStepStart, nous.EventUserMessage, nous.EventSystemMessage, nous.EventReplace:
			if pending {
				calls++
			}
			pending = false
		}
	}
	if pending {
		calls++
	}
	return calls, results, steps
}
