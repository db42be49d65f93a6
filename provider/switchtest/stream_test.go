package switchtest

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapttest"
	"github.com/nous-go/nous/internal/scripted"
	nousanthropic "github.com/nous-go/nous/provider/anthropic"
	nousgemini "github.com/nous-go/nous/provider/gemini"
	nousopenai "github.com/nous-go/nous/provider/openai"
)

// reader is a provider's stream reader, as a cut stream leaves it.
type reader[E any] interface {
	Add(E) error
	Message() (nous.Message, nous.Usage, error)
	Partial() (nous.Message, nous.Usage)
}

// partials returns the partial replies of the recorded streams that glob
// matches, cut after every event before their end: each that is not the
// zero message, as a runtime adds it after the stream stopped.
func partials[E any](t *testing.T, glob string, newReader func() reader[E]) []nous.Message {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded streams %s: %v", glob, err)
	}
	var out []nous.Message
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var events []E
		for _, frame := range scripted.Frames(string(b)) {
			var data []string
			for line := range strings.Lines(frame) {
				if d, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data:"); ok {
					data = append(data, strings.TrimSpace(d))
				}
			}
			if len(data) == 0 || data[0] == "[DONE]" {
				continue
			}
			var e E
			if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			events = append(events, e)
		}
		for k := range len(events) {
			r := newReader()
			for _, e := range events[:k] {
				if r.Add(e) != nil {
					break
				}
			}
			if _, _, err := r.Message(); err == nil {
				break // the reply ended: the rest are whole
			}
			if m, _ := r.Partial(); m.Role != "" {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no stream leaves a partial reply", glob)
	}
	return out
}

// streamedReplies returns a Reply of each provider's stream cut short: a
// partial reply, made by its adapter's stream reader from a recorded
// stream cut at a random event.
func streamedReplies(t *testing.T) []adapttest.Reply {
	pick := func(ms []nous.Message) adapttest.Reply {
		return func(r *rand.Rand) nous.Message {
			m := ms[r.IntN(len(ms))]
			m.CreatedAt = time.Now().UTC()
			return m
		}
	}
	return []adapttest.Reply{
		pick(partials(t, "../openai/testdata/stream/chat_*.sse", func() reader[openai.ChatCompletionChunk] { return new(nousopenai.ChatStream) })),
		pick(partials(t, "../openai/testdata/stream/responses_*.sse", func() reader[responses.ResponseStreamEventUnion] { return new(nousopenai.ResponsesStream) })),
		pick(partials(t, "../anthropic/testdata/stream/*.sse", func() reader[anthropic.MessageStreamEventUnion] { return new(nousanthropic.MessageStream) })),
		pick(partials(t, "../gemini/testdata/stream/*.sse", func() reader[*genai.GenerateContentResponse] { return new(nousgemini.ContentStream) })),
	}
}

// Random sessions in which any provider's reply may be a stream cut
// short, then another provider takes over: every adapter sends the view
// with the partial replies in it, as it sends the rest.
func TestSwitchingProvidersAfterCutStreams(t *testing.T) {
	n := newCounter()
	adapttest.Sessions(t, 2, 100, 30, append(replies(t, n), streamedReplies(t)...), senders(n)...)
}
