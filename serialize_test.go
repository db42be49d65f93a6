package nous_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
)

var serT0 = time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC)

func serAt(n int) time.Time { return serT0.Add(time.Duration(n) * time.Second) }

// serDefaultLogger sends slog.Default() to a recorder for the rest of the
// test; Deserialize warns there.
func serDefaultLogger(t *testing.T) *nous.LogRecorder {
	h := &nous.LogRecorder{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
	return h
}

func serMust(t testing.TB, err error) {
	t.Helper()
	require.NoError(t, err)
}

// TestSerializeRoundTrip writes and reads back the contexts that the model
// of TestFoldModel, the golden files and TestEveryFieldRoundTrips do not
// make: the zero context, a fork of an empty log, a log of thousands of
// replacements, and one with every kind of event, an overlay and runtime
// fields. Each reads back with the same log, identity, view (less the
// overlay) and persisted fields, re-encodes byte for byte, and its log goes
// on where it left off.
func TestSerializeRoundTrip(t *testing.T) {
	replaced := nous.NewContext()
	for i := range 2000 {
		serMust(t, replaced.AddMessage(nous.Message{Role: nous.RoleUser, Content: fmt.Sprint("m", i), CreatedAt: serAt(i)}))
		if i%2 == 1 {
			serMust(t, replaced.ReplaceMessageRange(replaced.Len()-2, replaced.Len()-1, nous.Message{Role: nous.RoleUser, Content: fmt.Sprint("r", i)}))
		}
	}
	full := aliasingContext(t)
	full.Stream, full.Usage, full.AgentName, full.Iteration = true, nous.Usage{Requests: 1, ReasoningTokens: 2}, "planner", 3
	full.AddToolCall(fullMessage().ToolCalls[0])
	for name, c := range map[string]*nous.Context{"zero": {}, "fork of an empty log": nous.NewContext().Clone(), "many replacements": replaced, "full": full} {
		t.Run(name, func(t *testing.T) {
			data, err := c.Serialize()
			require.NoError(t, err)
			r, err := nous.Deserialize(data)
			require.NoError(t, err)
			nous.CheckRestoredForTest(t, r)
			d := c.Clone()
			d.SetSystemPromptOverlay("")
			assert.Equal(t, d.Messages(), r.Messages())
			assert.Equal(t, c.Log().Events(), r.Log().Events())
			pid, pseq, pok := c.Log().Parent()
			rid, rseq, rok := r.Log().Parent()
			assert.Equal(t, []any{c.Log().ID(), pid, pseq, pok}, []any{r.Log().ID(), rid, rseq, rok})
			if c.Deps == nil {
				c.Deps = map[string]any{}
			}
			assert.Equal(t, []any{c.Deps, c.Usage, c.ToolCalls, c.SystemPrompt, c.NeedsResponse, c.Iteration, c.MaxIterations, c.AgentName},
				[]any{r.Deps, r.Usage, r.ToolCalls, r.SystemPrompt, r.NeedsResponse, r.Iteration, r.MaxIterations, r.AgentName})
			assert.True(t, c.StartedAt.Equal(r.StartedAt), "StartedAt %v, want %v", r.StartedAt, c.StartedAt)
			again, err := r.Serialize()
			require.NoError(t, err)
			assert.Equal(t, string(data), string(again), "re-encode is not stable")

			n := r.Log().Len()
			serMust(t, r.AddMessage(nous.UserMessage("more")))
			serMust(t, r.ReplaceMessage(r.Len()-1, nous.UserMessage("edited")))
			e, ok := r.Log().Event(int64(n + 2))
			assert.True(t, ok && e.Type == nous.EventReplace && e.First == int64(n+1), "the restored log goes on at seq %d: %+v", n+1, e)
			assert.Equal(t, n, c.Log().Len(), "the original log changed")
		})
	}
}

// TestSerializeStartedAt: written in UTC with nanoseconds, null when zero.
func TestSerializeStartedAt(t *testing.T) {
	tests := []struct {
		at   time.Time
		want string
	}{
		{time.Time{}, `"started_at":null`},
		{time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), `"started_at":"2026-01-02T03:04:05.000000006Z"`},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)), `"started_at":"2026-01-02T02:04:05Z"`},
	}
	for _, tt := range tests {
		c := nous.NewContext()
		c.StartedAt = tt.at
		data, err := c.Serialize()
		require.NoError(t, err)
		assert.Contains(t, string(data), tt.want)
		r, err := nous.Deserialize(data)
		require.NoError(t, err)
		assert.True(t, tt.at.Equal(r.StartedAt))
	}
}

// TestSerializeRedaction: no key on the redaction list is written, at any
// depth, in any case, in deps or event data; the live context keeps them.
func TestSerializeRedaction(t *testing.T) {
	type creds struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	keys := []string{"api_key", "APIKEY", "OpenAI_Api_Key", "token", "refresh_TOKEN", "Secret", "client_secret",
		"password", "db_passwd", "Authorization", "credentials", "private_key", "AWS_ACCESS_KEY_ID", "auth_token", "Bearer"}
	for _, k := range keys {
		t.Run(k, func(t *testing.T) {
			secret := "s3cr3t-" + strings.ToLower(k)
			deps := map[string]any{
				k:      secret,
				"keep": "visible",
				"nested": map[string]any{k: secret, "keep": 1, "deeper": map[string]any{
					"list": []any{map[string]any{k: secret, "keep": true}, secret + "-in-list-is-a-value"},
					k:      map[string]any{"whole": "subtree " + secret},
				}},
				"typed":  map[string]string{k: secret, "keep": "yes"},
				"struct": creds{User: "ada", Password: secret},
			}
			c := nous.NewContext(nous.WithDeps(deps))
			serMust(t, c.LogEvent(nous.EventRequestHeader, map[string]any{k: secret, "x-request-id": "r1", "headers": map[string]any{k: secret}}))
			liveDeps, liveEvents := c.ToRunContext().Deps, c.Log().Events()

			data, err := c.Serialize()
			require.NoError(t, err)
			s := string(data)
			assert.NotContains(t, s, secret)
			assert.NotContains(t, s, `"`+k+`"`)
			assert.NotContains(t, s, `"password"`)
			assert.Contains(t, s, `"keep":"visible"`)
			assert.Contains(t, s, `"x-request-id":"r1"`)
			assert.Contains(t, s, nous.MaskedSecret+"-in-list-is-a-value", "a secret's value is masked where it occurs")

			assert.Equal(t, liveDeps, c.ToRunContext().Deps, "the live deps changed")
			assert.Equal(t, liveEvents, c.Log().Events(), "the live log changed")
			assert.Equal(t, secret, c.Deps[k])
			assert.Equal(t, secret, c.Deps["nested"].(map[string]any)[k])

			r, err := nous.Deserialize(data)
			require.NoError(t, err)
			assert.NotContains(t, r.Deps, k)
			assert.Equal(t, map[string]any{"keep": "yes"}, r.Deps["typed"])
			assert.Equal(t, map[string]any{"user": "ada"}, r.Deps["struct"])
			assert.Equal(t, "visible", r.Deps["keep"])
		})
	}
	// Messages are the conversation and provider data: never redacted.
	c := nous.NewContext()
	serMust(t, c.AddMessage(nous.Message{Role: nous.RoleAssistant, Content: "x", CreatedAt: serT0,
		Metadata: map[string]any{"usage": map[string]any{"output_tokens": 3}}}))
	data, err := c.Serialize()
	require.NoError(t, err)
	r, err := nous.Deserialize(data)
	require.NoError(t, err)
	assert.Equal(t, c.Messages(), r.Messages())
}

// TestSerializeUnencodable: values JSON cannot hold are dropped with one
// warning naming them; the rest is written and the context keeps them all.
func TestSerializeUnencodable(t *testing.T) {
	rootCycle := map[string]any{"a": 1}
	rootCycle["again"] = rootCycle
	h0 := &nous.LogRecorder{}
	c0 := nous.NewContext(nous.WithLogger(slog.New(h0)))
	c0.Deps = rootCycle
	data0, err := c0.Serialize()
	require.NoError(t, err)
	assert.Contains(t, string(data0), `"deps":{"a":1}`)
	assert.Contains(t, strings.Join(h0.Warnings(), ""), "deps.again")

	cyclic := map[string]any{"name": "loop"}
	cyclic["self"] = cyclic
	list := []any{1, nil}
	list[1] = list
	type withFunc struct{ F func() }
	h := &nous.LogRecorder{}
	c := nous.NewContext(nous.WithLogger(slog.New(h)))
	c.Deps = map[string]any{
		"fn":      func() {},
		"ch":      make(chan int),
		"cplx":    complex(1, 2),
		"nan":     math.NaN(),
		"inf":     math.Inf(-1),
		"f32nan":  float32(math.NaN()),
		"cyclic":  cyclic,
		"list":    list,
		"struct":  withFunc{F: func() {}},
		"badnum":  json.Number("1x"),
		"badraw":  json.RawMessage(`{`),
		"bignum":  json.Number("123456789012345678901234567890"),
		"keep":    "ok",
		"nested":  map[string]any{"ok": 1, "fn": func() {}, "list": []any{1, func() {}, 3}},
		"secret2": func() {}, // redacted before it is checked: named as a secret, not as unencodable
	}
	serMust(t, c.LogEvent(nous.EventToolCall, map[string]any{"name": "x", "cb": func() {}}))
	serMust(t, c.AddMessage(nous.Message{Role: nous.RoleUser, Content: "hi", CreatedAt: serT0,
		Metadata: map[string]any{"ok": "yes", "ch": make(chan int)},
		Parts:    []nous.ContentPart{{Type: nous.PartText, Content: "p", Options: map[string]any{"nan": math.NaN(), "k": 1}}}}))
	serMust(t, c.AddMessage(nous.Message{Role: nous.RoleAssistant, CreatedAt: serT0,
		ToolCalls: []nous.ToolCall{{ID: "c1", Metadata: map[string]any{"f": func() {}, "sig": "abc"}}}}))
	c.AddToolCall(nous.ToolCall{ID: "t1", Arguments: json.RawMessage(`not json`), Metadata: map[string]any{"f": func() {}}})
	c.StartedAt = time.Date(10001, 1, 1, 0, 0, 0, 0, time.UTC)
	depsBefore := len(c.Deps)

	data, err := c.Serialize()
	require.NoError(t, err)
	warnings := h.Warnings()
	require.Len(t, warnings, 1, "one warning for all of them")
	for _, k := range []string{"deps.fn", "deps.ch", "deps.cplx", "deps.nan", "deps.inf", "deps.f32nan", "deps.cyclic.self",
		"deps.list[1]", "deps.struct", "deps.badnum", "deps.badraw", "deps.nested.fn", "deps.nested.list[1]",
		"log.events[0].data.cb", "log.events[1].message.metadata.ch", "log.events[1].message.parts[0].options.nan",
		"log.events[2].message.tool_calls[0].metadata.f", "log.events[3].call.metadata.f", "tool_calls[0].metadata.f", "started_at"} {
		assert.Contains(t, warnings[0], k)
	}
	assert.NotContains(t, warnings[0], "secret2", "a secret kept in deps is not warned of")
	assert.NotContains(t, warnings[0], "keep")

	assert.Len(t, c.Deps, depsBefore, "the context keeps its values")
	assert.NotNil(t, c.Deps["fn"])
	m := c.Messages()
	assert.Contains(t, m[0].Metadata, "ch")
	assert.Contains(t, c.ToolCalls[0].Metadata, "f")

	r, err := nous.Deserialize(data)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"keep":   "ok",
		"cyclic": map[string]any{"name": "loop"},
		"list":   []any{1},
		"bignum": json.Number("123456789012345678901234567890"),
		"nested": map[string]any{"ok": 1, "list": []any{1, 3}},
	}, r.Deps)
	rm := r.Messages()
	assert.Equal(t, map[string]any{"ok": "yes"}, rm[0].Metadata)
	assert.Equal(t, map[string]any{"k": 1}, rm[0].Parts[0].Options)
	assert.Equal(t, map[string]any{"sig": "abc"}, rm[1].ToolCalls[0].Metadata)
	assert.Equal(t, []nous.ToolCall{{ID: "t1", Arguments: json.RawMessage(`not json`), Metadata: map[string]any{}}}, r.ToolCalls, "arguments are kept as they came")
	assert.True(t, r.StartedAt.IsZero())

	// Nothing to drop: no warning.
	h2 := &nous.LogRecorder{}
	c2 := nous.NewContext(nous.WithLogger(slog.New(h2)), nous.WithDeps(map[string]any{"max_tokens": 5, "n": 1}))
	_, err = c2.Serialize()
	require.NoError(t, err)
	assert.Empty(t, h2.Warnings())
}

// TestDeserializeV1 reads blobs of the reference's version 1 format that
// the fixtures of TestGoldenV1 do not hold, and checks what every version 1
// read promises: the caller's logger, warnings only where due, a new log ID
// each time, the restore time as every event's and message's, a re-encode
// that reads back the same.
func TestDeserializeV1(t *testing.T) {
	serDefaultLogger(t) // quiet: Deserialize warns on slog's default
	tests := []struct {
		name  string
		blob  string
		check func(t *testing.T, c *nous.Context)
		warn  string
	}{
		{
			name: "nulls read as missing",
			blob: `{"version":1,"messages":null,"deps":null,"max_iterations":null,"started_at":null,"tool_calls":null,"usage":null}`,
			check: func(t *testing.T, c *nous.Context) {
				assert.Equal(t, map[string]any{}, c.Deps)
				assert.Equal(t, 10, c.MaxIterations)
			},
		},
		{
			name: "unknown role read as user, null arguments",
			blob: `{"version":1,"messages":[{"role":"developer","content":"x"},{"content":"no role"},{"role":"assistant","tool_calls":[{"id":"c","arguments":null}]}]}`,
			warn: "unknown role read as user",
			check: func(t *testing.T, c *nous.Context) {
				m := c.Messages()
				assert.Equal(t, nous.RoleUser, m[0].Role)
				assert.Equal(t, nous.RoleUser, m[1].Role)
				assert.Equal(t, nous.EventUserMessage, c.Log().Events()[0].Type)
				assert.Nil(t, m[2].ToolCalls[0].Arguments)
			},
		},
		{
			name:  "started_at of another type reads as zero",
			blob:  `{"version":1,"started_at":12345}`,
			check: func(t *testing.T, c *nous.Context) { assert.True(t, c.StartedAt.IsZero()) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &nous.LogRecorder{}
			logger := slog.New(rec)
			before := time.Now().UTC()
			c, err := nous.DeserializeWithLogger([]byte(tt.blob), logger)
			after := time.Now().UTC()
			require.NoError(t, err)
			assert.Same(t, logger, c.Logger)
			tt.check(t, c)
			assert.NotEqual(t, uuid.Nil, c.Log().ID())
			_, _, fork := c.Log().Parent()
			assert.False(t, fork)
			for _, e := range c.Log().Events() {
				// v1 never persisted created_at: event and message carry the restore time.
				assert.False(t, e.CreatedAt.Before(before) || e.CreatedAt.After(after))
				assert.Equal(t, e.CreatedAt, e.Message.CreatedAt)
			}
			if tt.warn != "" {
				assert.Contains(t, strings.Join(rec.Warnings(), "\n"), tt.warn)
			} else {
				assert.Empty(t, rec.Warnings())
			}
			// A second read gets a new log ID; the re-encode reads back the same.
			d, err := nous.Deserialize([]byte(tt.blob))
			require.NoError(t, err)
			nous.CheckRestoredForTest(t, d)
			assert.NotEqual(t, c.Log().ID(), d.Log().ID())
			data, err := c.Serialize()
			require.NoError(t, err)
			r, err := nous.Deserialize(data)
			require.NoError(t, err)
			assert.Equal(t, c.Messages(), r.Messages())
			assert.Equal(t, c.Log().ID(), r.Log().ID())
		})
	}
}

// Pieces of version 2 blobs for the catalog of bad input.
const (
	serID   = `"01890a5d-ac96-774b-bcce-b302099a8057"`
	serTime = `"2026-01-01T00:00:00Z"`
)

func serUserEvent(seq int, text string) string {
	return fmt.Sprintf(`{"seq":%d,"type":"user_message","message":{"role":"user","content":%q},"created_at":%s}`, seq, text, serTime)
}

func serReplaceEvent(seq, first, last int) string {
	return fmt.Sprintf(`{"seq":%d,"type":"replace","message":{"role":"user","content":"r"},"created_at":%s,"first":%d,"last":%d}`, seq, serTime, first, last)
}

func serEvent(seq int, rest string) string {
	return fmt.Sprintf(`{"seq":%d,"created_at":%s,%s}`, seq, serTime, rest)
}

// serBlob returns a version 2 blob with the given events and extra top-level
// fields ("" for none).
func serBlob(extra string, events ...string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"version":2%s,"log":{"id":%s,"events":[%s]}}`, extra, serID, strings.Join(events, ","))
}

func serLogBlob(log string) string { return fmt.Sprintf(`{"version":2,"log":%s}`, log) }

type serBadCase struct {
	name  string
	blob  string
	want  error
	place string // a piece of the error's text: where the problem is
}

// serBadCatalog is the catalog of malformed and hostile blobs, each with the
// error it must produce.
func serBadCatalog() []serBadCase {
	valid := serBlob("", serUserEvent(1, "a"), serUserEvent(2, "b"))
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	return []serBadCase{
		{"empty", ``, nous.ErrMalformed, "not valid JSON"},
		{"white space", " \n\t", nous.ErrMalformed, "not valid JSON"},
		{"null", `null`, nous.ErrMalformed, "not a JSON object"},
		{"array", `[{"version":2}]`, nous.ErrMalformed, "not a JSON object"},
		{"string", `"version 2"`, nous.ErrMalformed, "not a JSON object"},
		{"number", `2`, nous.ErrMalformed, "not a JSON object"},
		{"truncated", valid[:len(valid)/2], nous.ErrMalformed, "not valid JSON"},
		{"truncated by one", valid[:len(valid)-1], nous.ErrMalformed, "not valid JSON"},
		{"trailing data", valid + ` {}`, nous.ErrMalformed, "not valid JSON"},
		{"trailing garbage", valid + `x`, nous.ErrMalformed, "not valid JSON"},
		{"not JSON", `{version: 2}`, nous.ErrMalformed, "not valid JSON"},
		{"nested too deeply", `{"version":2,"deps":` + deep + `}`, nous.ErrMalformed, ""},

		{"no version", `{}`, nous.ErrMissingVersion, "no version"},
		{"no version, v2 body", strings.Replace(valid, `"version":2,`, "", 1), nous.ErrMissingVersion, ""},
		{"version null", `{"version":null}`, nous.ErrMissingVersion, ""},
		{"version string", strings.Replace(valid, `"version":2`, `"version":"2"`, 1), nous.ErrMissingVersion, `"2"`},
		{"version float", strings.Replace(valid, `"version":2`, `"version":2.0`, 1), nous.ErrMissingVersion, "2.0"},
		{"version exponent", `{"version":2e0}`, nous.ErrMissingVersion, "2e0"},
		{"version bool", `{"version":true}`, nous.ErrMissingVersion, ""},
		{"version object", `{"version":{"major":2}}`, nous.ErrMissingVersion, ""},
		{"version wins over junk", `{"version":"2","log":5,"deps":[]}`, nous.ErrMissingVersion, ""},
		{"version 3", strings.Replace(valid, `"version":2`, `"version":3`, 1), nous.ErrUnsupportedVersion, "version 3"},
		{"version 0", `{"version":0}`, nous.ErrUnsupportedVersion, "version 0"},
		{"version -1", `{"version":-1}`, nous.ErrUnsupportedVersion, "version -1"},
		{"huge version", `{"version":123456789012345678901234567890}`, nous.ErrUnsupportedVersion, "12345678901234567890"},
		{"unknown version with junk", `{"version":7,"log":[],"messages":5}`, nous.ErrUnsupportedVersion, "version 7"},

		{"v2 without log", `{"version":2,"messages":[]}`, nous.ErrMalformed, "log: missing"},
		{"log null", serLogBlob(`null`), nous.ErrMalformed, "log: missing"},
		{"log not an object", serLogBlob(`[]`), nous.ErrMalformed, "log"},
		{"log id missing", serLogBlob(`{"events":[]}`), nous.ErrMalformed, "log.id"},
		{"log id not a UUID", serLogBlob(`{"id":"abc","events":[]}`), nous.ErrMalformed, "log.id"},
		{"log id not canonical", serLogBlob(`{"id":"urn:uuid:01890a5d-ac96-774b-bcce-b302099a8057","events":[]}`), nous.ErrMalformed, "log.id"},
		{"log id nil", serLogBlob(`{"id":"00000000-0000-0000-0000-000000000000","events":[]}`), nous.ErrMalformed, "log.id"},
		{"log id a number", serLogBlob(`{"id":7,"events":[]}`), nous.ErrMalformed, "log.id"},
		{"events missing", serLogBlob(`{"id":` + serID + `}`), nous.ErrMalformed, "log.events"},
		{"events null", serLogBlob(`{"id":` + serID + `,"events":null}`), nous.ErrMalformed, "log.events"},
		{"events an object", serLogBlob(`{"id":` + serID + `,"events":{"1":{}}}`), nous.ErrMalformed, "log.events"},
		{"events a string", serLogBlob(`{"id":` + serID + `,"events":"[]"}`), nous.ErrMalformed, "log.events"},
		{"event not an object", serBlob("", `5`), nous.ErrMalformed, "log.events[0]"},
		{"parent without fork seq", serLogBlob(`{"id":` + serID + `,"parent_id":` + serID + `,"events":[]}`), nous.ErrMalformed, "log.fork_seq"},
		{"fork seq without parent", serLogBlob(`{"id":` + serID + `,"fork_seq":0,"events":[]}`), nous.ErrMalformed, "log.fork_seq"},
		{"fork seq past the log", serLogBlob(`{"id":` + serID + `,"parent_id":` + serID + `,"fork_seq":3,"events":[]}`), nous.ErrInvalidLog, "log.fork_seq 3"},
		{"fork seq negative", serLogBlob(`{"id":` + serID + `,"parent_id":` + serID + `,"fork_seq":-1,"events":[]}`), nous.ErrInvalidLog, "log.fork_seq -1"},
		{"parent id not a UUID", serLogBlob(`{"id":` + serID + `,"parent_id":"x","fork_seq":0,"events":[]}`), nous.ErrMalformed, "log.parent_id"},
		{"fork seq a string", serLogBlob(`{"id":` + serID + `,"parent_id":` + serID + `,"fork_seq":"0","events":[]}`), nous.ErrMalformed, "log.fork_seq"},

		{"seq starts at 0", serBlob("", serUserEvent(0, "a")), nous.ErrInvalidLog, "log.events[0]: seq 0, want 1"},
		{"duplicate seq", serBlob("", serUserEvent(1, "a"), serUserEvent(1, "b")), nous.ErrInvalidLog, "log.events[1]: seq 1, want 2"},
		{"seqs out of order", serBlob("", serUserEvent(2, "a"), serUserEvent(1, "b")), nous.ErrInvalidLog, "log.events[0]"},
		{"seq gap", serBlob("", serUserEvent(1, "a"), serUserEvent(3, "b")), nous.ErrInvalidLog, "log.events[1]"},
		{"seq missing", serBlob("", `{"type":"turn_start","created_at":`+serTime+`}`), nous.ErrInvalidLog, "log.events[0]"},
		{"seq a string", serBlob("", serUserEvent(1, "a"), `{"seq":"2","type":"turn_start","created_at":`+serTime+`}`), nous.ErrMalformed, "log.events[1]"},
		{"seq fractional", serBlob("", `{"seq":1.5,"type":"turn_start","created_at":`+serTime+`}`), nous.ErrMalformed, "log.events[0]"},
		{"seq huge", serBlob("", `{"seq":99999999999999999999,"type":"turn_start","created_at":`+serTime+`}`), nous.ErrMalformed, "log.events[0]"},
		{"unknown event type", serBlob("", serUserEvent(1, "a"), serEvent(2, `"type":"telepathy"`)), nous.ErrUnknownEventType, "log.events[1]"},
		{"empty event type", serBlob("", serEvent(1, `"type":""`)), nous.ErrUnknownEventType, "log.events[0]"},
		{"event type a number", serBlob("", serEvent(1, `"type":4`)), nous.ErrMalformed, "log.events[0]"},
		{"surface event without message", serBlob("", serEvent(1, `"type":"user_message"`)), nous.ErrInvalidLog, "log.events[0]"},
		{"bookkeeping event with a message", serBlob("", serEvent(1, `"type":"turn_start","message":{"role":"user","content":"x"}`)), nous.ErrInvalidLog, "log.events[0]"},
		{"bookkeeping event with anchors", serBlob("", serUserEvent(1, "a"), serEvent(2, `"type":"step_end","first":1,"last":1`)), nous.ErrInvalidLog, "log.events[1]"},
		{"message event with anchors", serBlob("", serUserEvent(1, "a"), serEvent(2, `"type":"user_message","message":{"role":"user","content":"x"},"first":1,"last":1`)), nous.ErrInvalidLog, "log.events[1]"},
		{"event type and role disagree", serBlob("", serEvent(1, `"type":"user_message","message":{"role":"assistant","content":"x"}`)), nous.ErrInvalidLog, "log.events[0]"},
		{"invalid message: tool without call id", serBlob("", serEvent(1, `"type":"tool_result","message":{"role":"tool","content":"x"}`)), nous.ErrInvalidMessage, "log.events[0]"},
		{"invalid message: unknown role", serBlob("", serEvent(1, `"type":"replace","message":{"role":"wizard","content":"x"},"first":1,"last":1`)), nous.ErrInvalidMessage, "log.events[0]"},
		{"invalid message: empty user", serBlob("", serUserEvent(1, "")), nous.ErrInvalidMessage, "log.events[0]"},
		{"invalid message: unknown part", serBlob("", serEvent(1, `"type":"user_message","message":{"role":"user","parts":[{"type":"hologram","content":"x"}]}`)), nous.ErrInvalidMessage, "log.events[0]"},
		{"message role a number", serBlob("", serEvent(1, `"type":"user_message","message":{"role":1,"content":"x"}`)), nous.ErrMalformed, "log.events[0]"},
		{"message not an object", serBlob("", serEvent(1, `"type":"user_message","message":"hi"`)), nous.ErrMalformed, "log.events[0]"},
		{"message created_at junk", serBlob("", serEvent(1, `"type":"user_message","message":{"role":"user","content":"x","created_at":"noon"}`)), nous.ErrMalformed, "log.events[0]"},
		{"metadata not an object", serBlob("", serEvent(1, `"type":"user_message","message":{"role":"user","content":"x","metadata":[1]}`)), nous.ErrMalformed, "log.events[0]"},
		{"event created_at junk", serBlob("", `{"seq":1,"type":"turn_start","created_at":"yesterday"}`), nous.ErrMalformed, "log.events[0]"},
		{"event created_at a number", serBlob("", `{"seq":1,"type":"turn_start","created_at":0}`), nous.ErrMalformed, "log.events[0]"},
		{"data not an object", serBlob("", serEvent(1, `"type":"turn_start","data":[1]`)), nous.ErrMalformed, "log.events[0]"},
		{"data nested too deeply", serBlob("", serEvent(1, `"type":"turn_start","data":{"x":`+deep+`}`)), nous.ErrMalformed, ""},
		{"replace anchor that does not exist", serBlob("", serUserEvent(1, "a"), serReplaceEvent(2, 1, 9)), nous.ErrInvalidLog, "log.events[1]"},
		{"replace anchor zero", serBlob("", serUserEvent(1, "a"), serReplaceEvent(2, 0, 1)), nous.ErrInvalidLog, "log.events[1]"},
		{"replace anchor itself", serBlob("", serUserEvent(1, "a"), serReplaceEvent(2, 2, 2)), nous.ErrInvalidLog, "log.events[1]"},
		{"replace anchor already shadowed", serBlob("", serUserEvent(1, "a"), serUserEvent(2, "b"), serReplaceEvent(3, 1, 2), serReplaceEvent(4, 2, 3)), nous.ErrInvalidLog, "log.events[3]: replace anchors"},
		{"replace anchors reversed", serBlob("", serUserEvent(1, "a"), serUserEvent(2, "b"), serReplaceEvent(3, 2, 1)), nous.ErrInvalidLog, "log.events[2]: replace anchor"},
		{"replace anchor a bookkeeping event", serBlob("", serUserEvent(1, "a"), serEvent(2, `"type":"turn_start"`), serReplaceEvent(3, 1, 2)), nous.ErrInvalidLog, "log.events[2]: replace anchors"},
		{"replace anchors missing", serBlob("", serUserEvent(1, "a"), serEvent(2, `"type":"replace","message":{"role":"user","content":"r"}`)), nous.ErrInvalidLog, "log.events[1]"},
		{"replace anchors strings", serBlob("", serUserEvent(1, "a"), serEvent(2, `"type":"replace","message":{"role":"user","content":"r"},"first":"1","last":"1"`)), nous.ErrMalformed, "log.events[1]"},

		{"deps an array", serBlob(`"deps":[]`), nous.ErrMalformed, "deps"},
		{"deps a string", serBlob(`"deps":"{}"`), nous.ErrMalformed, "deps"},
		{"usage an array", serBlob(`"usage":[1]`), nous.ErrMalformed, "usage"},
		{"usage field a string", serBlob(`"usage":{"requests":"1"}`), nous.ErrMalformed, "usage"},
		{"usage field fractional", serBlob(`"usage":{"reasoning_tokens":1.5}`), nous.ErrMalformed, "usage"},
		{"iteration a string", serBlob(`"iteration":"3"`), nous.ErrMalformed, "iteration"},
		{"iteration too big", serBlob(`"iteration":1e400`), nous.ErrMalformed, "iteration"},
		{"max_iterations fractional", serBlob(`"max_iterations":2.5`), nous.ErrMalformed, "max_iterations"},
		{"needs_response a string", serBlob(`"needs_response":"true"`), nous.ErrMalformed, "needs_response"},
		{"system_prompt a number", serBlob(`"system_prompt":5`), nous.ErrMalformed, "system_prompt"},
		{"agent_name an object", serBlob(`"agent_name":{}`), nous.ErrMalformed, "agent_name"},
		{"started_at a number", serBlob(`"started_at":0`), nous.ErrMalformed, "started_at"},
		{"started_at junk", serBlob(`"started_at":"noon"`), nous.ErrMalformed, "started_at"},
		{"tool_calls an object", serBlob(`"tool_calls":{}`), nous.ErrMalformed, "tool_calls"},
		{"tool_call not an object", serBlob(`"tool_calls":[1]`), nous.ErrMalformed, "tool_calls[0]"},
		{"messages an object", serBlob(`"messages":{}`), nous.ErrMalformed, "messages"},
		{"messages a string", serBlob(`"messages":"[]"`), nous.ErrMalformed, "messages"},

		{"v1 messages an object", `{"version":1,"messages":{"0":{}}}`, nous.ErrMalformed, "messages"},
		{"v1 message not an object", `{"version":1,"messages":["hello"]}`, nous.ErrMalformed, "messages[0]"},
		{"v1 role a number", `{"version":1,"messages":[{"role":1,"content":"x"}]}`, nous.ErrMalformed, "messages[0]"},
		{"v1 content a number", `{"version":1,"messages":[{"role":"user","content":5}]}`, nous.ErrMalformed, "messages[0].content"},
		{"v1 content parts junk", `{"version":1,"messages":[{"role":"user","content":[1,2]}]}`, nous.ErrMalformed, "messages[0].content"},
		{"v1 tool message without call id", `{"version":1,"messages":[{"role":"user","content":"a"},{"role":"tool","content":"x"}]}`, nous.ErrInvalidMessage, "messages[1]"},
		{"v1 user without content", `{"version":1,"messages":[{"role":"user","content":null}]}`, nous.ErrInvalidMessage, "messages[0]"},
		{"v1 unknown role with a call id", `{"version":1,"messages":[{"role":"function","content":"x","tool_call_id":"c"}]}`, nous.ErrInvalidMessage, "messages[0]"},
		{"v1 unknown part type", `{"version":1,"messages":[{"role":"user","content":[{"type":"smell","content":"x"}]}]}`, nous.ErrInvalidMessage, "messages[0]"},
		{"v1 tool call without id", `{"version":1,"messages":[{"role":"assistant","tool_calls":[{"name":"f"}]}]}`, nous.ErrInvalidMessage, "messages[0]"},
		{"v1 tool_calls a string", `{"version":1,"messages":[{"role":"assistant","tool_calls":"none"}]}`, nous.ErrMalformed, "messages[0].tool_calls"},
		{"v1 metadata a list", `{"version":1,"messages":[{"role":"user","content":"x","metadata":[]}]}`, nous.ErrMalformed, "messages[0].metadata"},
		{"v1 deps a list", `{"version":1,"deps":[1]}`, nous.ErrMalformed, "deps"},
		{"v1 iteration a string", `{"version":1,"iteration":"2"}`, nous.ErrMalformed, "iteration"},
		{"v1 max_iterations a bool", `{"version":1,"max_iterations":true}`, nous.ErrMalformed, "max_iterations"},
		{"v1 usage a number", `{"version":1,"usage":5}`, nous.ErrMalformed, "usage"},
		{"v1 needs_response a number", `{"version":1,"needs_response":1}`, nous.ErrMalformed, "needs_response"},
		{"v1 deps nested too deeply", `{"version":1,"deps":{"x":` + deep + `}}`, nous.ErrMalformed, ""},
	}
}

// TestDeserializeBadInput: every blob of the catalog fails with its error,
// names the place, returns no context and panics never.
func TestDeserializeBadInput(t *testing.T) {
	serDefaultLogger(t) // quiet
	catalog := serBadCatalog()
	require.GreaterOrEqual(t, len(catalog), 30)
	names := map[string]bool{}
	for _, tt := range catalog {
		require.False(t, names[tt.name], "duplicate case %q", tt.name)
		names[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			c, err := nous.Deserialize([]byte(tt.blob))
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "nous: deserialize: "), err.Error())
			assert.Contains(t, err.Error(), tt.place)
			for _, other := range []error{nous.ErrMalformed, nous.ErrMissingVersion, nous.ErrUnsupportedVersion, nous.ErrInvalidLog, nous.ErrInvalidMessage, nous.ErrUnknownEventType} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("error also matches %v: %v", other, err)
				}
			}
		})
	}
}

// TestDeserializeV2Lenient: what a version 2 reader accepts beyond what
// Serialize writes.
func TestDeserializeV2Lenient(t *testing.T) {
	tests := []struct {
		name  string
		blob  string
		check func(t *testing.T, c *nous.Context)
	}{
		{"unknown keys ignored", `{"version":2,"future":1,"log":{"id":` + serID + `,"events":[],"later":true}}`, func(t *testing.T, c *nous.Context) {
			assert.Equal(t, 0, c.Log().Len())
		}},
		{"defaults for missing fields", serBlob(""), func(t *testing.T, c *nous.Context) {
			assert.Equal(t, 10, c.MaxIterations)
			assert.Equal(t, map[string]any{}, c.Deps)
			assert.False(t, c.NeedsResponse)
			assert.True(t, c.StartedAt.IsZero())
			assert.Nil(t, c.ToolCalls)
		}},
		{"messages projection is not read", serBlob(`"messages":[{"role":"wizard"}]`, serUserEvent(1, "a")), func(t *testing.T, c *nous.Context) {
			assert.Equal(t, "a", c.Messages()[0].Content)
		}},
		{"indented arguments are kept as they are", serBlob(`"tool_calls":[{"id":"c","arguments":{ "a" : [1, 2] }}]`,
			serEvent(1, `"type":"assistant_message","message":{"role":"assistant","tool_calls":[{"id":"c","arguments":{
				"q": "a b"
			}}]}`)), func(t *testing.T, c *nous.Context) {
			assert.Equal(t, json.RawMessage("{\n\t\t\t\t\"q\": \"a b\"\n\t\t\t}"), c.Messages()[0].ToolCalls[0].Arguments)
			assert.Equal(t, json.RawMessage(`{ "a" : [1, 2] }`), c.ToolCalls[0].Arguments)
		}},
		{"whole numbers as int", serBlob(`"deps":{"i":3,"f":3.5,"e":1e2,"big":123456789012345678901234567890}`,
			serEvent(1, `"type":"turn_start","data":{"n":7}`)), func(t *testing.T, c *nous.Context) {
			assert.Equal(t, map[string]any{"i": 3, "f": 3.5, "e": 100.0, "big": json.Number("123456789012345678901234567890")}, c.Deps)
			assert.Equal(t, map[string]any{"n": 7}, c.Log().Events()[0].Data)
		}},
		{"replacing a replacement", serBlob("", serUserEvent(1, "a"), serUserEvent(2, "b"), serUserEvent(3, "c"),
			serReplaceEvent(4, 2, 3), serReplaceEvent(5, 1, 4)), func(t *testing.T, c *nous.Context) {
			m := c.Messages()
			require.Len(t, m, 1)
			assert.Equal(t, "r", m[0].Content)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := nous.Deserialize([]byte(tt.blob))
			require.NoError(t, err)
			nous.CheckRestoredForTest(t, c)
			tt.check(t, c)
		})
	}
}

// TestDeserializeLinear: logs of thousands of replacements read back in
// linear memory: twice the events allocate about twice the bytes (a fold
// copying the view per replacement would allocate four times as much). One
// log is a chain, each replacement replacing the one before; the other
// replaces, one by one, every message of a long view.
func TestDeserializeLinear(t *testing.T) {
	chain := func(n int) []string {
		events := []string{serUserEvent(1, "a")}
		for seq := 2; seq <= n; seq++ {
			events = append(events, serReplaceEvent(seq, seq-1, seq-1))
		}
		return events
	}
	each := func(n int) []string {
		var events []string
		for seq := 1; seq <= n/2; seq++ {
			events = append(events, serUserEvent(seq, "a"))
		}
		for seq := n/2 + 1; seq <= n; seq++ {
			events = append(events, serReplaceEvent(seq, seq-n/2, seq-n/2))
		}
		return events
	}
	for name, log := range map[string]func(int) []string{"chain": chain, "each": each} {
		allocated := func(n int) uint64 {
			blob := []byte(serBlob("", log(n)...))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			c, err := nous.Deserialize(blob)
			runtime.ReadMemStats(&after)
			require.NoError(t, err)
			assert.Equal(t, n, c.Log().Len())
			return after.TotalAlloc - before.TotalAlloc
		}
		small, large := allocated(10000), allocated(20000)
		ratio := float64(large) / float64(small)
		t.Logf("%s: %d bytes for 10,000 events, %d for 20,000 (%.2fx)", name, small, large, ratio)
		assert.Less(t, ratio, 2.6, name)
	}
}

// TestSerializeIsReadOnly: serializing does not write the context,
// so two goroutines may serialize the same idle context.
func TestSerializeIsReadOnly(t *testing.T) {
	c := aliasingContext(t)
	c.Logger = slog.New(&nous.LogRecorder{})
	var wg sync.WaitGroup
	out := make([][]byte, 4)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := c.Serialize()
			assert.NoError(t, err)
			out[i] = data
		}()
	}
	wg.Wait()
	for _, d := range out[1:] {
		assert.True(t, bytes.Equal(out[0], d))
	}
}

// Whatever Serialize writes reads back, however deep a value the context
// holds: a typed value nested past the limit, here raw JSON in metadata, is
// dropped with a warning rather than written where the decoder refuses it.
func TestSerializeDeepTypedValueStillReadsBack(t *testing.T) {
	deep := json.RawMessage(strings.Repeat("[", 9990) + strings.Repeat("]", 9990))
	var logged bytes.Buffer
	c := nous.NewContext(nous.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	m := nous.UserMessage("hi")
	m.Metadata = map[string]any{"deep": deep, "kept": "yes"}
	require.NoError(t, c.AddMessage(m))
	b, err := c.Serialize()
	require.NoError(t, err)
	r, err := nous.Deserialize(b)
	require.NoError(t, err)
	got, _ := r.LastMessage()
	require.Equal(t, map[string]any{"kept": "yes"}, got.Metadata)
	require.Contains(t, logged.String(), "deep")
	require.Contains(t, c.Messages()[0].Metadata, "deep", "the live context keeps its value")
}

// Event data loses its secrets but keeps usage counts: the rule there goes by
// words, so "input_tokens" is not a "token".
func TestSerializeEventDataSecretsByWord(t *testing.T) {
	c := nous.NewContext()
	require.NoError(t, c.LogEvent(nous.EventStepEnd, map[string]any{
		"input_tokens": 120, "max_tokens": 4096, "tokenizer": "bpe",
		"Authorization": "Bearer x", "x-api-key": "k", "refreshToken": "t", "AUTH_TOKEN": "a",
		"headers": map[string]any{"db_password": "p", "XApiKey": "k", "accept": "json"},
	}))
	b, err := c.Serialize()
	require.NoError(t, err)
	for _, secret := range []string{"Bearer x", `"k"`, `"t"`, `"a"`, `"p"`} {
		require.NotContains(t, string(b), secret)
	}
	r, err := nous.Deserialize(b)
	require.NoError(t, err)
	e, ok := r.Log().Event(1)
	require.True(t, ok)
	require.Equal(t, map[string]any{
		"input_tokens": 120, "max_tokens": 4096, "tokenizer": "bpe",
		"headers": map[string]any{"accept": "json"},
	}, e.Data)
	live, _ := c.Log().Event(1)
	require.Equal(t, "Bearer x", live.Data["Authorization"], "the live context keeps its values")
}

// Messages are written as the model saw them: keys that name secrets stay
// in their metadata, their parts' options and their calls' metadata, and
// in a recorded call's metadata; only deps and event data are redacted.
func TestSerializeDoesNotRedactMessages(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(quietLogger()), nous.WithDeps(map[string]any{"api_key": "sk-dep"}))
	secret := map[string]any{"api_key": "sk-1", "access_token": "t"}
	m := nous.AssistantMessage("hi", nous.ToolCall{ID: "a", Name: "f", Metadata: secret})
	m.Metadata = secret
	m.Parts = []nous.ContentPart{{Type: nous.PartThinking, Content: "x", Options: secret}}
	serMust(t, c.AddMessage(m))
	c.AddToolCall(nous.ToolCall{ID: "b", Name: "g", Metadata: secret})
	data, err := c.Serialize()
	serMust(t, err)
	d, err := nous.Deserialize(data)
	serMust(t, err)
	got, _ := d.LastMessage()
	for where, md := range map[string]map[string]any{
		"metadata": got.Metadata, "part options": got.Parts[0].Options, "a call's metadata": got.ToolCalls[0].Metadata,
		"a recorded call's metadata": d.ToolCalls[0].Metadata,
	} {
		assert.Equal(t, secret, md, "%s of a message", where)
	}
	_, kept := d.Deps["api_key"]
	assert.False(t, kept, "deps are redacted")
}

// What Serialize drops (a NaN, say) it drops from what it writes, never
// from the context: the log's messages, parts and calls keep every value.
func TestSerializeLeavesTheLogAsItIs(t *testing.T) {
	c := nous.NewContext(nous.WithLogger(quietLogger()))
	bad := func() map[string]any { return map[string]any{"score": math.NaN(), "ok": 1} }
	m := nous.AssistantMessage("hi", nous.ToolCall{ID: "a", Name: "f", Metadata: bad()}, nous.ToolCall{ID: "b", Name: "f"})
	m.Metadata = bad()
	m.Parts = []nous.ContentPart{{Type: nous.PartText, Content: "p", Options: bad()}, {Type: nous.PartText, Content: "q"}}
	serMust(t, c.AddMessage(m))
	_, err := c.Serialize()
	serMust(t, err)
	for _, got := range c.All() {
		for where, md := range map[string]map[string]any{"metadata": got.Metadata, "part options": got.Parts[0].Options, "a call's metadata": got.ToolCalls[0].Metadata} {
			score, ok := md["score"].(float64)
			assert.True(t, ok && math.IsNaN(score), "the log's message lost its %s NaN: %v", where, md)
		}
	}
}

// Keys that differ only in bytes that are not UTF-8 would be written as one
// key twice (JSON replaces each such byte with U+FFFD), one value lost at
// random: they are dropped, every one of them, with a warning naming them,
// in deps, event data and metadata alike; a key that is not UTF-8 and meets
// no other is written, repaired.
func TestSerializeDropsKeysThatCollideAsUTF8(t *testing.T) {
	rec := &nous.LogRecorder{}
	colliding := func() map[string]any {
		return map[string]any{"a\xff": 1, "a\xfe": 2, "a\ufffd": 3, "b\xff": 4, "ok": 5}
	}
	c := nous.NewContext(nous.WithLogger(slog.New(rec)), nous.WithDeps(colliding()))
	m := nous.UserMessage("hi")
	m.Metadata = colliding()
	serMust(t, c.AddMessage(m))
	serMust(t, c.LogEvent(nous.EventTurnStart, colliding()))
	data, err := c.Serialize()
	serMust(t, err)
	d, err := nous.Deserialize(data)
	serMust(t, err)
	e, _ := d.Log().Event(2)
	got, _ := d.LastMessage()
	for where, m := range map[string]map[string]any{"deps": d.Deps, "metadata": got.Metadata, "event data": e.Data} {
		assert.Equal(t, map[string]any{"a\ufffd": 3, "b\ufffd": 4, "ok": 5}, m, where)
	}
	warned := strings.Join(rec.Matching("dropped"), "\n")
	assert.Contains(t, warned, "unencodable", "a warning names the keys dropped")
	assert.Contains(t, warned, "deps.a", "a warning names the keys dropped")
	assert.Equal(t, 4, d.Deps["b\ufffd"], "a key with no other like it is kept")
}
