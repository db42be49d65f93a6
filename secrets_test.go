package nous_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/storetest"
)

// writtenStore is a store in memory that keeps every byte it was given to
// write: the events and the state of each batch.
type writtenStore struct {
	nous.Store
	mu      sync.Mutex
	written [][]byte
}

func (s *writtenStore) Append(ctx context.Context, b nous.Batch) error {
	s.mu.Lock()
	s.written = append(s.written, b.State)
	for _, e := range b.Events {
		s.written = append(s.written, e)
	}
	s.mu.Unlock()
	return s.Store.Append(ctx, b)
}

// secretForms returns secret as it is and as JSON escapes it, once and
// twice: the bytes in which it would reach a document.
func secretForms(secret string) []string {
	once, _ := json.Marshal(secret)
	twice, _ := json.Marshal(string(once))
	return []string{secret, string(once[1 : len(once)-1]), string(twice[3 : len(twice)-3])}
}

type clientConfig struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// A secret value of the deps never reaches what is written, in any shape,
// wherever the conversation repeats it: Serialize, AppendEventJSON and a
// store's batches hold the marker in its place, and the session loads
// back; the context itself, what the model sees, keeps every value. A
// value shorter than 8 bytes is not masked.
func TestSecretValuesNeverReachDisk(t *testing.T) {
	ctx := context.Background()
	secrets := map[string]string{ // what, the value
		"a string":                "sk-live-0123456789abcdef",
		"a number":                "4815162342",
		"a nested password":       "hunter2-correct-horse",
		"a struct's secret":       "client-secret-in-a-struct",
		"quotes and a backslash":  `pa"ss\word-123`,
		"overlapping, first":      "abcdefgh12",
		"overlapping, second":     "gh12345678",
		"a prefix of another":     "tok-0123456789",
		"the longer one":          "tok-0123456789-long",
		"eight bytes":             "abcd1234",
		"under a secret subtree":  "subtree-value-1",
		"a list under the secret": "listed-secret-2",
	}
	const short = "abc1234" // seven bytes: not masked
	deps := map[string]any{
		"api_key":        secrets["a string"],
		"account_secret": 4815162342,
		"db":             map[string]any{"host": "db.local", "password": secrets["a nested password"]},
		"oauth":          clientConfig{ClientID: "app-1", ClientSecret: secrets["a struct's secret"]},
		"client_secret":  secrets["quotes and a backslash"],
		"secret_a":       secrets["overlapping, first"],
		"secret_b":       secrets["overlapping, second"],
		"session_token":  secrets["a prefix of another"],
		"refresh_token":  secrets["the longer one"],
		"eight_secret":   secrets["eight bytes"],
		"short_secret":   short,
		"credentials":    map[string]any{"user": secrets["under a secret subtree"], "more": []any{secrets["a list under the secret"]}},
		"last_output":    "OPENAI_API_KEY=" + secrets["a string"],
	}
	echo := strings.Join([]string{"OPENAI_API_KEY=" + secrets["a string"], "abcdefgh12345678", secrets["the longer one"], secrets["a prefix of another"],
		short, secrets["eight bytes"], secrets["a string"] + secrets["a string"], secrets["under a secret subtree"], secrets["a list under the secret"]}, "\n")
	args, err := json.Marshal(map[string]string{"cmd": "curl -H 'Authorization: Bearer " + secrets["a string"] + "'", "pw": secrets["quotes and a backslash"]})
	require.NoError(t, err)

	c := nous.NewContext(nous.WithDeps(deps), nous.WithLogger(slog.New(slog.DiscardHandler)),
		nous.WithSystemPrompt("Use the key "+secrets["a string"]+" for the weather API."))
	require.NoError(t, c.AddMessage(nous.UserMessage("My password is "+secrets["a nested password"]+", my pin "+secrets["a number"]+".")))
	require.NoError(t, c.AddMessage(nous.UserMessageParts(nous.TextPart("the key "+secrets["a string"]))))
	reply := nous.AssistantMessage("Logging in with "+secrets["a struct's secret"]+".",
		nous.ToolCall{ID: "c1", Name: "shell", Arguments: args},
		nous.ToolCall{ID: "c2", Name: "login", Arguments: json.RawMessage(`{"user":"ann"}`)})
	reply.ReasoningContent = "the user gave " + secrets["a nested password"]
	reply.Metadata = map[string]any{"note": secrets["a struct's secret"], "pin": 4815162342}
	require.NoError(t, c.AddMessage(reply))
	req, err := c.RequestApproval("c2")
	require.NoError(t, err)
	pending := c.Pending()
	require.Len(t, pending.Calls, 2)
	require.NoError(t, c.Decide(nous.Decision{CallID: "c2", Digest: pending.Calls[1].Digest, Request: req, Approve: true,
		Arguments: json.RawMessage(`{"user":"ann","password":"` + secrets["a nested password"] + `"}`), Reason: "ok with " + secrets["eight bytes"]}))
	require.NoError(t, c.AddMessage(nous.ToolMessage("c1", "shell", echo)))
	require.NoError(t, c.AddMessage(nous.ToolMessage("c2", "login", `{"ok":true,"token":"`+secrets["the longer one"]+`"}`)))
	require.NoError(t, c.LogEvent(nous.EventRequestHeader, map[string]any{"echo": secrets["a string"], "n": 4815162342}))
	c.EndStep(nous.Step{Provider: "openai", Model: "m", Error: "it said " + secrets["a string"], Usage: nous.Usage{InputTokens: 4815162342}})
	view := c.Messages()

	var written []string
	doc, err := c.Serialize()
	require.NoError(t, err)
	written = append(written, string(doc))
	for seq := int64(1); seq <= int64(c.Log().Len()); seq++ {
		e, err := c.AppendEventJSON(nil, seq)
		require.NoError(t, err)
		written = append(written, string(e))
	}
	store := &writtenStore{Store: storetest.NewMemory()}
	require.NoError(t, c.Save(ctx, store))
	for _, b := range store.written {
		written = append(written, string(b))
	}
	all := strings.Join(written, "\n")
	// Usage counts are never masked: a count that is a secret's number is
	// a count (see the step below).
	all = strings.NewReplacer(`"input_tokens":4815162342`, "", `"total_tokens":4815162342`, "").Replace(all)

	for what, secret := range secrets {
		for _, form := range secretForms(secret) {
			assert.NotContains(t, all, form, "%s (%q) is written", what, form)
		}
	}
	assert.Contains(t, all, nous.MaskedSecret)
	assert.Contains(t, all, short, "a value of seven bytes is not masked")
	assert.Equal(t, view, c.Messages(), "the view the model sees is unchanged")
	assert.Contains(t, c.Messages()[0].Content, secrets["a nested password"])

	loaded, err := nous.Load(ctx, store, c.Log().ID())
	require.NoError(t, err, "the masked session loads")
	msgs := loaded.Messages()
	assert.Equal(t, "My password is "+nous.MaskedSecret+", my pin "+nous.MaskedSecret+".", msgs[0].Content)
	var got map[string]string
	require.NoError(t, msgs[2].ToolCalls[0].ParseArguments(&got), "masked arguments are still JSON")
	assert.Equal(t, map[string]string{"cmd": "curl -H 'Authorization: Bearer " + nous.MaskedSecret + "'", "pw": nous.MaskedSecret}, got)
	assert.Equal(t, nous.MaskedSecret, msgs[2].Metadata["pin"], "a number that is a secret")
	assert.Equal(t, "OPENAI_API_KEY="+nous.MaskedSecret, loaded.Deps["last_output"])
	var step nous.Step
	for _, e := range loaded.Log().Events() {
		if s, ok := nous.StepOf(e); ok {
			step = s
		}
	}
	assert.Equal(t, 4815162342, step.Usage.InputTokens, "a count is never masked")
	again, err := nous.Deserialize(doc)
	require.NoError(t, err, "the masked document reads back")
	assert.Equal(t, msgs, again.Messages())
}

// BenchmarkSerializeMasked is Serialize of a conversation of 200 messages
// (about 40 KB) without secrets in its deps and with three, one of which
// the conversation repeats; ns/KB is per KB of the document, so that the
// two give the masking's cost.
func BenchmarkSerializeMasked(b *testing.B) {
	for _, withSecrets := range []bool{false, true} {
		deps := map[string]any{"region": "eu"}
		if withSecrets {
			deps = map[string]any{"region": "eu", "api_key": "sk-proj-4f9a8b7c6d5e4f3a2b1c",
				"db": map[string]any{"password": `pa"ss\word-123`}, "pin_secret": 4815162342}
		}
		c := nous.NewContext(nous.WithDeps(deps))
		for i := range 100 {
			text := "The weather in Paris is sunny, 21 degrees; searching for flights: results 1-20 of 143, sorted by price."
			if i%10 == 0 {
				text += " The key is sk-proj-4f9a8b7c6d5e4f3a2b1c."
			}
			if err := c.AddMessages(nous.UserMessage(text), nous.AssistantMessage(text)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(map[bool]string{false: "secrets=0", true: "secrets=3"}[withSecrets], func(b *testing.B) {
			var n int
			b.ReportAllocs()
			for b.Loop() {
				doc, err := c.Serialize()
				if err != nil {
					b.Fatal(err)
				}
				n = len(doc)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(n)/1024), "ns/KB")
		})
	}
}

// A save whose reply was lost is found by the next save though the deps
// gained a secret since, which the lost batch held unmasked: the batch is
// compared as it was sent, masked by the secrets of then, and its turn is
// stored once.
func TestLostReplyFoundWhenTheSecretsChanged(t *testing.T) {
	ctx := context.Background()
	const key = "sk-live-0123456789abcdef"
	s := &lostReplyStore{Store: storetest.NewMemory()}
	c := nous.NewContext(quietOption)
	require.NoError(t, c.AddMessage(nous.UserMessage("one")))
	require.NoError(t, c.Save(ctx, s))
	require.NoError(t, c.AddMessage(nous.UserMessage("my key is "+key)))
	s.armed = true
	require.ErrorIs(t, c.Save(ctx, s), errLostReply)

	c.Deps["api_key"] = key
	require.NoError(t, c.AddMessage(nous.UserMessage("two")))
	require.NoError(t, c.Save(ctx, s), "the lost batch is not found")
	loaded, err := nous.Load(ctx, s, c.Log().ID())
	require.NoError(t, err)
	var texts []string
	for _, m := range loaded.Messages() {
		texts = append(texts, m.Content)
	}
	assert.Equal(t, []string{"one", "my key is " + key, "two"}, texts, "stored once, as it landed")
}
