package nous_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nous-go/nous"
)

// The benchmarks of the core. Each size is a sub-benchmark, n=10k and so on.
// Benchmarks named Floor... are the baselines the targets compare against:
// the same work done on plain slices and maps, with no log behind them.
// BENCHMARKS.md lists which benchmark is compared with which.
//
// Per-message figures are reported as ns/msg (and B/msg, allocs/msg where
// they say more than the per-op ones).

var sizes = []struct {
	name string
	n    int
}{{"n=10k", 10_000}, {"n=100k", 100_000}}

// benchMessage is the plain message the benchmarks add: text only, no maps
// or slices, a fixed CreatedAt so the floor appends the identical value.
var benchMessage = nous.Message{
	Role:      nous.RoleUser,
	Content:   "What is the weather in Paris today?",
	CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
}

// conversation returns n messages cycling user, assistant with a tool call,
// tool result, like the turns of an agent run.
func conversation(n int) []nous.Message {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	msgs := make([]nous.Message, 0, n)
	for i := range n {
		var m nous.Message
		switch i % 3 {
		case 0:
			m = nous.Message{Role: nous.RoleUser, Content: fmt.Sprintf("Question %d: what is the weather in Paris today?", i)}
		case 1:
			m = nous.Message{Role: nous.RoleAssistant, ToolCalls: []nous.ToolCall{{
				ID: fmt.Sprintf("call_%d", i), Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`),
			}}}
		case 2:
			m = nous.Message{Role: nous.RoleTool, ToolCallID: fmt.Sprintf("call_%d", i-1), Name: "get_weather", Content: `{"temp_c":21,"sky":"clear"}`}
		}
		m.CreatedAt = at.Add(time.Duration(i) * time.Second)
		msgs = append(msgs, m)
	}
	return msgs
}

// plainContext returns a context holding n copies of benchMessage.
func plainContext(b testing.TB, n int) *nous.Context {
	b.Helper()
	c := nous.NewContext()
	for range n {
		if err := c.AddMessage(benchMessage); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// conversationContext returns a context holding conversation(n).
func conversationContext(b testing.TB, n int) *nous.Context {
	b.Helper()
	c := nous.NewContext()
	if err := c.AddMessages(conversation(n)...); err != nil {
		b.Fatal(err)
	}
	return c
}

// forSizes runs body as a sub-benchmark for each size n, reporting
// allocations.
func forSizes(b *testing.B, body func(b *testing.B, n int)) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			body(b, s.n)
		})
	}
}

// perMsg reports the cost per message of an op that handles n messages.
func perMsg(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/msg")
}

// BenchmarkAddMessage adds n plain messages, one call each, to a new
// context: the amortized cost of AddMessage with a log of up to n events.
func BenchmarkAddMessage(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		for b.Loop() {
			c := nous.NewContext()
			for range n {
				if err := c.AddMessage(benchMessage); err != nil {
					b.Fatal(err)
				}
			}
		}
		perMsg(b, n)
	})
}

// BenchmarkFloorAppend is AddMessage's floor: the same event struct and the
// same message value appended to two plain slices, n times.
func BenchmarkFloorAppend(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		for b.Loop() {
			var events []nous.Event
			var msgs []nous.Message
			for i := range n {
				events = append(events, nous.Event{Seq: int64(i + 1), Type: nous.EventUserMessage, CreatedAt: benchMessage.CreatedAt})
				msgs = append(msgs, benchMessage)
			}
			sinkInt += len(events) + len(msgs)
		}
		perMsg(b, n)
	})
}

// BenchmarkAddMessages adds n plain messages in one batch to a new context.
func BenchmarkAddMessages(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		batch := make([]nous.Message, n)
		for i := range batch {
			batch[i] = benchMessage
		}
		for b.Loop() {
			c := nous.NewContext()
			if err := c.AddMessages(batch...); err != nil {
				b.Fatal(err)
			}
		}
		perMsg(b, n)
	})
}

var (
	sinkInt   int
	sinkMsg   nous.Message
	sinkMsgs  []nous.Message
	sinkCtx   *nous.Context
	sinkBytes []byte
	sinkMap   map[string]any
)

// BenchmarkAll walks the view of a conversation of n messages with All.
func BenchmarkAll(b *testing.B) { benchAll(b, "") }

// BenchmarkAllOverlaid is BenchmarkAll with a system-prompt overlay set, as
// a runtime sets one on every run: the view starts with the overlay's own
// system message, which All yields before the log's.
func BenchmarkAllOverlaid(b *testing.B) { benchAll(b, "Today is Monday.") }

func benchAll(b *testing.B, overlay string) {
	forSizes(b, func(b *testing.B, n int) {
		c := conversationContext(b, n)
		c.SetSystemPromptOverlay(overlay)
		for b.Loop() {
			sinkInt += walkAll(c)
		}
		perMsg(b, n)
	})
}

// walkAll, walkSlice and walkSlicesAll are the one loop body the walk
// benchmarks time, each in its own function as a runtime's code would be:
// written inline in a b.Loop loop, the loop body could not be inlined into
// the iterator, because b.Loop keeps every call's arguments alive, and the
// benchmark would time a cost no caller outside a benchmark pays.
func walkAll(c *nous.Context) int {
	k := 0
	for _, m := range c.All() {
		k += len(m.Content) + len(m.ToolCalls)
	}
	return k
}

func walkSlice(msgs []nous.Message) int {
	k := 0
	for _, m := range msgs {
		k += len(m.Content) + len(m.ToolCalls)
	}
	return k
}

func walkSlicesAll(msgs []nous.Message) int {
	k := 0
	for _, m := range slices.All(msgs) {
		k += len(m.Content) + len(m.ToolCalls)
	}
	return k
}

// BenchmarkFloorRange is All's floor: ranging over a plain []Message with
// the same loop body.
func BenchmarkFloorRange(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		msgs := conversation(n)
		for b.Loop() {
			sinkInt += walkSlice(msgs)
		}
		perMsg(b, n)
	})
}

// BenchmarkFloorSlicesAll ranges slices.All over the same plain []Message
// with the same loop body: the cost of any iter.Seq2[int, Message], which
// hands each 160-byte Message to the loop body by value through yield. It
// separates what All pays for being an iterator from what it pays for the
// log behind it.
func BenchmarkFloorSlicesAll(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		msgs := conversation(n)
		for b.Loop() {
			sinkInt += walkSlicesAll(msgs)
		}
		perMsg(b, n)
	})
}

// BenchmarkMessages copies the view of n plain messages with Messages.
func BenchmarkMessages(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		c := plainContext(b, n)
		for b.Loop() {
			sinkMsgs = c.Messages()
		}
		perMsg(b, n)
	})
}

// BenchmarkFloorClone is Messages' floor: slices.Clone of the same view as
// a plain []Message.
func BenchmarkFloorClone(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		view := plainContext(b, n).Messages()
		for b.Loop() {
			sinkMsgs = slices.Clone(view)
		}
		perMsg(b, n)
	})
}

// BenchmarkLastMessage reads the last message of a view of n messages.
func BenchmarkLastMessage(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		c := plainContext(b, n)
		for b.Loop() {
			sinkMsg, _ = c.LastMessage()
		}
	})
}

// BenchmarkLogEvent appends a bookkeeping event with a one-key payload to a
// context of n messages; the log grows by one event per op.
func BenchmarkLogEvent(b *testing.B) {
	benchLogEvent(b, nous.EventToolCall, map[string]any{"tool": "get_weather"})
}

// BenchmarkLogEventNoData is LogEvent with no payload: what the log itself
// costs per bookkeeping event.
func BenchmarkLogEventNoData(b *testing.B) { benchLogEvent(b, nous.EventStepStart, nil) }

func benchLogEvent(b *testing.B, typ nous.EventType, data map[string]any) {
	forSizes(b, func(b *testing.B, n int) {
		c := plainContext(b, n)
		for b.Loop() {
			if err := c.LogEvent(typ, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// refill is how many replacements a Replace benchmark makes before it
// restores its view, untimed, to n entries.
const refill = 1000

// BenchmarkReplaceMessage replaces the middle message of a view of n.
func BenchmarkReplaceMessage(b *testing.B) { benchReplace(b, 1) }

// BenchmarkReplaceMessageRange replaces two messages in the middle of a view
// of about n (it shrinks by one per op and is restored every 1,000 ops) with
// one: the view's tail moves down by one entry.
func BenchmarkReplaceMessageRange(b *testing.B) { benchReplace(b, 2) }

// benchReplace replaces width messages in the middle of a view of n. Every
// refill ops it goes on, untimed, on a new clone of the context of n
// messages, so that it times a replace on a log of n to n+refill events
// instead of one that grows by millions. The clone shares the context's
// view; one untimed replacement makes the view its own, as the first
// replacement on any clone does.
func benchReplace(b *testing.B, width int) {
	m := nous.Message{Role: nous.RoleUser, Content: "[compacted]"}
	forSizes(b, func(b *testing.B, n int) {
		base := plainContext(b, n)
		restore := func() *nous.Context {
			c := base.Clone()
			if err := c.ReplaceMessage(n/2, m); err != nil {
				b.Fatal(err)
			}
			return c
		}
		c, i := restore(), 0
		for b.Loop() {
			if i++; i%refill == 0 {
				b.StopTimer()
				c = restore()
				b.StartTimer()
			}
			var err error
			if width == 1 {
				err = c.ReplaceMessage(n/2, m)
			} else {
				err = c.ReplaceMessageRange(n/2, n/2+1, m)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFloorReplace is the Replace benchmarks' floor: slices.Replace on
// a plain []Message of the same length, one entry by one (single) and two
// by one (range). Range shrinks the slice by one per op and is restored the
// same way as ReplaceMessageRange; single keeps its length and is never
// restored (restoring 100k messages every 1,000 single replacements, each a
// 14 ns store, made the benchmark spend minutes untimed).
func BenchmarkFloorReplace(b *testing.B) {
	m := nous.Message{Role: nous.RoleUser, Content: "[compacted]"}
	for _, kind := range []struct {
		name  string
		width int
	}{{"single", 1}, {"range", 2}} {
		for _, s := range sizes {
			b.Run(kind.name+"/"+s.name, func(b *testing.B) {
				base := plainContext(b, s.n).Messages()
				view := slices.Clone(base)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if i++; kind.width > 1 && i%refill == 0 {
						b.StopTimer()
						view = append(view[:0], base...)
						b.StartTimer()
					}
					view = slices.Replace(view, s.n/2, s.n/2+kind.width, m)
				}
				sinkInt += len(view)
			})
		}
	}
}

// BenchmarkFloorReplaceLogged is ReplaceMessage's floor for what it has to
// do: a replace that is logged, as the log's design asks, on plain slices. It
// appends an event, stamped with the time, and its message, stored inline so
// that the op allocates nothing of its own, to a plain slice, and replaces
// the middle entry of a []Message view of n with slices.Replace. Like
// ReplaceMessage's, its log starts anew, untimed, every refill ops, and in
// between it grows by doubling.
func BenchmarkFloorReplaceLogged(b *testing.B) {
	type logged struct {
		e nous.Event
		m nous.Message
	}
	m := nous.Message{Role: nous.RoleUser, Content: "[compacted]"}
	forSizes(b, func(b *testing.B, n int) {
		view := plainContext(b, n).Messages()
		var log []logged
		i := 0
		for b.Loop() {
			if i++; i%refill == 0 {
				b.StopTimer()
				sinkInt += len(log)
				log = nil
				b.StartTimer()
			}
			msg := m
			msg.CreatedAt = view[n/2].CreatedAt
			log = append(log, logged{nous.Event{Seq: int64(len(log) + 1), Type: nous.EventReplace, CreatedAt: time.Now().UTC()}, msg})
			view = slices.Replace(view, n/2, n/2+1, msg)
		}
		sinkInt += len(view) + len(log)
	})
}

// BenchmarkFloorNow reads the clock as every appended event does: part of
// ReplaceMessage's cost that no replace on a plain slice pays.
func BenchmarkFloorNow(b *testing.B) {
	b.ReportAllocs()
	var at time.Time
	for b.Loop() {
		at = time.Now().UTC()
	}
	sinkInt += at.Nanosecond()
}

// BenchmarkClone clones a context of n messages and a few deps.
func BenchmarkClone(b *testing.B) {
	for _, s := range []struct {
		name string
		n    int
	}{{"n=1k", 1_000}, {"n=100k", 100_000}} {
		b.Run(s.name, func(b *testing.B) {
			c := plainContext(b, s.n)
			c.MergeDeps(map[string]any{"user": "ada", "city": "Paris", "visits": []any{"Lyon", "Nice"}})
			b.ReportAllocs()
			for b.Loop() {
				sinkCtx = c.Clone()
			}
		})
	}
}

// BenchmarkPatchDanglingToolCalls scans a conversation of 100k messages with
// no dangling call: the cost of the check a runner makes before each call.
func BenchmarkPatchDanglingToolCalls(b *testing.B) {
	b.Run("n=100k", func(b *testing.B) {
		c := conversationContext(b, 100_000)
		c.PatchDanglingToolCalls()
		b.ReportAllocs()
		for b.Loop() {
			sinkInt += c.PatchDanglingToolCalls()
		}
		perMsg(b, 100_000)
	})
}

// BenchmarkToDeps reduces an update of 2,000 appends to one key onto deps
// that already hold a list there: the list must be copied once, not 2,000
// times.
func BenchmarkToDeps(b *testing.B) {
	b.Run("appends=2000", func(b *testing.B) {
		u := nous.NewContextUpdate()
		for i := range 2000 {
			u = u.Append("items", i)
		}
		initial := map[string]any{"items": []any{"a", "b", "c"}, "user": "ada"}
		b.ReportAllocs()
		for b.Loop() {
			deps, err := u.ToDeps(initial)
			if err != nil {
				b.Fatal(err)
			}
			sinkMap = deps
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2000, "ns/append")
	})
}

// tenOps is a 10-operation update: sets, a merge, appends, a delete.
func tenOps() nous.ContextUpdate {
	return nous.NewContextUpdate().
		Set("city", "Paris").
		Set("units", "metric").
		Set("count", 3).
		Merge("prefs", map[string]any{"lang": "fr", "tz": "Europe/Paris"}).
		Append("visited", "Paris").
		Append("visited", "Lyon").
		Append("log", map[string]any{"step": 1}).
		Delete("stale").
		Set("last_tool", "get_weather").
		Append("log", map[string]any{"step": 2})
}

// BenchmarkApply applies a 10-op update to a context whose deps hold 10 or
// 1,000 keys, including the lists and maps it appends and merges into.
func BenchmarkApply(b *testing.B) {
	u := tenOps()
	for _, s := range []struct {
		name string
		keys int
	}{{"keys=10", 10}, {"keys=1000", 1000}} {
		b.Run(s.name, func(b *testing.B) {
			deps := map[string]any{
				"visited": []any{"Nice"},
				"log":     []any{},
				"prefs":   map[string]any{"lang": "en"},
				"stale":   true,
			}
			for i := len(deps); i < s.keys; i++ {
				deps[fmt.Sprintf("key%04d", i)] = i
			}
			base := nous.NewContext(nous.WithDeps(deps))
			c := base.Clone()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				// The lists grow by two per Apply: restore them every 64
				// ops so the op works on lists of the same few items
				// whatever b.N. (A clone does not own its source's spare
				// capacity, so the first Apply after a restore copies
				// them: about 1 op in 64.)
				if i++; i%64 == 0 {
					b.StopTimer()
					c = base.Clone()
					b.StartTimer()
				}
				if err := u.Apply(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// appendWindow is how many Applies BenchmarkApplyAppendPerTurn makes
// before it restores its list, untimed, to its initial length.
const appendWindow = 10_000

// BenchmarkApplyAppendPerTurn applies an update of one Append to a context
// whose deps already hold a list of n items, built by n such Applies: what a
// tool that appends one item per turn costs per turn. The list is restored
// to n items every 10,000 ops (a clone of the built context and its first
// Apply, which copies the list, then a GC, all untimed, so that the garbage
// of the restore is not collected during the timed ops), so it holds n to
// n+10,000 items whatever b.N; between restores the context appends in
// place into its spare capacity, re-growing it as append does (at 1k the
// list grows 11 times over in a window, so it pays append's doublings; at
// 100k it has room). The per-op cost should not depend on n.
func BenchmarkApplyAppendPerTurn(b *testing.B) {
	u := nous.NewContextUpdate().Append("items", "turn")
	for _, s := range []struct {
		name string
		n    int
	}{{"items=1k", 1_000}, {"items=100k", 100_000}} {
		b.Run(s.name, func(b *testing.B) {
			base := nous.NewContext()
			for i := range s.n {
				if err := nous.NewContextUpdate().Append("items", i).Apply(base); err != nil {
					b.Fatal(err)
				}
			}
			restore := func() *nous.Context {
				c := base.Clone()
				if err := u.Apply(c); err != nil {
					b.Fatal(err)
				}
				return c
			}
			c := restore()
			runtime.GC()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i++; i%appendWindow == 0 {
					b.StopTimer()
					c = restore()
					runtime.GC()
					b.StartTimer()
				}
				if err := u.Apply(c); err != nil {
					b.Fatal(err)
				}
			}
			if l, _ := nous.Dep[[]any](c.Deps, "items"); len(l) < s.n {
				b.Fatalf("the list has %d items, want at least %d", len(l), s.n)
			}
		})
	}
}

var serialSizes = []struct {
	name string
	n    int
}{{"events=1k", 1_000}, {"events=10k", 10_000}, {"events=100k", 100_000}}

// serialContext returns a context of about n events: a conversation of n
// messages, or, replaced, one of n*10/11 messages followed by n/11
// replacements of two messages by one spread over the view, so the log has
// thousands of replace events at 100k.
func serialContext(b *testing.B, n int, replaced bool) *nous.Context {
	b.Helper()
	if !replaced {
		return conversationContext(b, n)
	}
	msgs := n * 10 / 11
	c := conversationContext(b, msgs)
	m := nous.Message{Role: nous.RoleUser, Content: "[compacted]"}
	// The roles of the view, kept beside it: each replacement takes a whole
	// tool-call group (a call and its result), which keeps the pairing.
	roles := make([]nous.Role, 0, msgs)
	for _, m := range c.All() {
		roles = append(roles, m.Role)
	}
	for k := range n - msgs {
		i := (k * 7919) % (len(roles) - 1)
		for roles[i] != nous.RoleAssistant || roles[i+1] != nous.RoleTool {
			i = (i + 1) % (len(roles) - 1)
		}
		if err := c.ReplaceMessageRange(i, i+1, m); err != nil {
			b.Fatal(err)
		}
		roles = slices.Replace(roles, i, i+2, nous.RoleUser)
	}
	return c
}

// forSerialSizes runs f for every size, with and without replacements.
func forSerialSizes(b *testing.B, f func(b *testing.B, c *nous.Context)) {
	for _, s := range serialSizes {
		for _, kind := range []string{"plain", "replaced"} {
			b.Run(s.name+"/"+kind, func(b *testing.B) {
				c := serialContext(b, s.n, kind == "replaced")
				b.ReportAllocs()
				f(b, c)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Log().Len()), "ns/event")
			})
		}
	}
}

// BenchmarkSerialize encodes a context of n events (format version 2).
func BenchmarkSerialize(b *testing.B) {
	forSerialSizes(b, func(b *testing.B, c *nous.Context) {
		for b.Loop() {
			data, err := c.Serialize()
			if err != nil {
				b.Fatal(err)
			}
			sinkBytes = data
		}
	})
}

// BenchmarkDeserialize decodes a context of n events, folding its log.
func BenchmarkDeserialize(b *testing.B) {
	forSerialSizes(b, func(b *testing.B, c *nous.Context) {
		data, err := c.Serialize()
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			d, err := nous.Deserialize(data)
			if err != nil {
				b.Fatal(err)
			}
			sinkCtx = d
		}
	})
}

// BenchmarkRoundTrip is Serialize then Deserialize of a context of n
// events: the figure compared with BenchmarkFloorJSON.
func BenchmarkRoundTrip(b *testing.B) {
	forSerialSizes(b, func(b *testing.B, c *nous.Context) {
		for b.Loop() {
			data, err := c.Serialize()
			if err != nil {
				b.Fatal(err)
			}
			d, err := nous.Deserialize(data)
			if err != nil {
				b.Fatal(err)
			}
			sinkCtx = d
		}
	})
}

// BenchmarkFloorJSON is the round trip's floor: encoding/json Marshal and
// Unmarshal of the bare []Message of the same view. Its ns/event divides by
// the same number of events as the round trip it is compared with.
func BenchmarkFloorJSON(b *testing.B) {
	forSerialSizes(b, func(b *testing.B, c *nous.Context) {
		view := c.Messages()
		for b.Loop() {
			data, err := json.Marshal(view)
			if err != nil {
				b.Fatal(err)
			}
			var out []nous.Message
			if err := json.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
			sinkMsgs = out
		}
	})
}

// BenchmarkPlanCompaction plans the compaction of a view of 100,000
// messages after one message was added since the last plan, against one
// walk of the view with All (FloorPlanWalk): the target is at most twice the
// walk plus counting the one new message, with pruning (WithToolResultLimit)
// too.
func BenchmarkPlanCompaction(b *testing.B) {
	const n = 100_000
	msgs := conversation(n)
	for i := range msgs { // tool results of a kilobyte each, which pruning shortens
		if msgs[i].Role == nous.RoleTool {
			msgs[i].Content = strings.Repeat(msgs[i].Content, 1024/len(msgs[i].Content))
		}
	}
	c := nous.NewContext()
	if err := c.AddMessages(msgs...); err != nil {
		b.Fatal(err)
	}
	budget := 1 // nothing fits: the plan finds no cut before the active turn
	b.Run("impl=plan", func(b *testing.B) {
		if _, err := c.PlanCompaction(budget); err == nil {
			b.Fatal("the plan fit")
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := c.AddMessage(nous.UserMessage("one more")); err != nil {
				b.Fatal(err)
			}
			if _, err := c.PlanCompaction(budget); err == nil {
				b.Fatal("the plan fit")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/msg")
	})
	prune := nous.WithToolResultLimit(64) // every tool result of the view is over it
	b.Run("impl=plan-prune", func(b *testing.B) {
		if _, err := c.PlanCompaction(budget, prune); err == nil {
			b.Fatal("the plan fit")
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := c.AddMessage(nous.UserMessage("one more")); err != nil {
				b.Fatal(err)
			}
			if _, err := c.PlanCompaction(budget, prune); err == nil {
				b.Fatal("the plan fit")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/msg")
	})
	// A plan that pruning alone makes fit: it lists every result it
	// shortens, a third of the view.
	b.Run("impl=plan-prune-fits", func(b *testing.B) {
		p, err := c.PlanCompaction(1<<40, prune)
		if err != nil {
			b.Fatal(err)
		}
		fits := p.TokensBefore - 1 // over it by one: pruning saves far more, and the messages added far less
		b.ReportAllocs()
		for b.Loop() {
			if err := c.AddMessage(nous.UserMessage("one more")); err != nil {
				b.Fatal(err)
			}
			p, err := c.PlanCompaction(fits, prune)
			if err != nil || len(p.Dropped) > 0 || len(p.Pruned) == 0 {
				b.Fatalf("the plan summarizes or fails: %d dropped, %d pruned, %v", len(p.Dropped), len(p.Pruned), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/msg")
	})
	b.Run("impl=walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkInt += walkAll(c)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/msg")
	})
}
