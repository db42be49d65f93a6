package nous

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nous-go/nous/internal/reftest"
)

// This file gives the tests of package nous_test what only package nous
// can: test-only helpers that reach inside, and the adapters both packages
// share (they are compiled into one test binary).

// Seed returns the seed of a model-based or differential test (see
// reftest.Seed: one -nous.seed flag for every package's tests).
func Seed(t testing.TB) uint64 { return reftest.Seed(t) }

// Long reports whether -nous.long was given.
func Long() bool { return reftest.Long() }

// BuildForTest builds the update of ops with the builder methods, handing
// them copies of the values that it then scribbles over: an update that
// kept what it was handed would change.
func BuildForTest(ops []reftest.Op) ContextUpdate {
	var u ContextUpdate // the zero value is an empty update
	var handed []any
	for _, op := range ops {
		v := reftest.Copy(op.Value)
		switch op.Kind {
		case reftest.Set:
			u = u.Set(op.Key, v)
		case reftest.Merge:
			m, _ := v.(map[string]any)
			u = u.Merge(op.Key, m)
		case reftest.Append:
			u = u.Append(op.Key, v)
		case reftest.Delete:
			u = u.Delete(op.Key)
		case reftest.Log:
			d, _ := reftest.Copy(op.Data).(map[string]any)
			u = u.LogEvent(EventType(op.Event), d)
			v = d
		}
		handed = append(handed, v)
	}
	for _, v := range handed {
		reftest.Scribble(v)
	}
	return u
}

// FreezeForTest makes c's log deterministic for golden files: its ID (and,
// for a fork, its parent's) become id and parent, and every event is stamped
// base + seq seconds. When messages is true, every message of the log is
// stamped the same way, as a version 1 restore would stamp them with the
// time of the restore. Records shared with another log get the same stamps
// there, which only tests may rely on.
func FreezeForTest(c *Context, id, parent uuid.UUID, base time.Time, messages bool) {
	c.ready()
	c.log.id = id
	if c.log.parent != uuid.Nil {
		c.log.parent = parent
	}
	for seq := int64(1); seq <= c.log.len(); seq++ {
		r := c.log.rec(seq)
		r.at = base.Add(time.Duration(seq) * time.Second)
		if messages && r.typ.IsSurface() {
			c.log.msg(r.ref).msg.CreatedAt = r.at
		}
	}
}

// CheckRestoredForTest checks the internal state Deserialize promises: no
// overlay, no runtime fields, a view that is the fold of the log, and a view
// of its own.
func CheckRestoredForTest(t testing.TB, c *Context) {
	t.Helper()
	if c.view.leadMode != leadNone || c.view.overlay != "" || c.view.shared {
		t.Errorf("restored context has lead mode %d, overlay %q, shared view %v", c.view.leadMode, c.view.overlay, c.view.shared)
	}
	if c.Stream || c.CancellationCheck != nil || c.Callbacks != nil || c.Notify != nil || c.ApprovalHandler != nil || c.Logger != nil || c.Redact != nil {
		t.Errorf("restored context has runtime fields set")
	}
	view, err := c.log.fold()
	if err != nil {
		t.Fatalf("restored log does not fold: %v", err)
	}
	if len(view) != len(c.view.entries) {
		t.Fatalf("view has %d entries, the fold %d", len(c.view.entries), len(view))
	}
	for i := range view {
		if view[i] != c.view.entries[i] {
			t.Fatalf("view[%d] = message %d, the fold says %d", i, c.view.entries[i], view[i])
		}
	}
}

// CheckToolCallsRecordForTest checks that c's ToolCalls is, to the slice
// header, the record a save compares it with: the next Save or Refresh
// tells by the slice alone, at no cost per call, that it was not written,
// and a Serialize of c writes nothing.
func CheckToolCallsRecordForTest(t testing.TB, c *Context) {
	t.Helper()
	n := c.log.calls.len()
	if int64(len(c.ToolCalls)) != n || len(c.calls) != len(c.ToolCalls) || (n > 0 && &c.calls[0] != &c.ToolCalls[0]) {
		t.Errorf("ToolCalls (%d calls) is not the record the next save compares it with (%d calls; the log records %d)", len(c.ToolCalls), len(c.calls), n)
	}
}

// LogRecorder is a slog.Handler that keeps every record it is given, for the
// tests that check what was logged.
type LogRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *LogRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *LogRecorder) WithGroup(string) slog.Handler      { return h }

// Matching returns the records whose message contains substr, each as
// "LEVEL message key=value ...".
func (h *LogRecorder) Matching(substr string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if strings.Contains(r.Message, substr) {
			out = append(out, r.Level.String()+" "+recordText(r))
		}
	}
	return out
}

// Warnings returns the warnings, each as "message key=value ...".
func (h *LogRecorder) Warnings() []string {
	var out []string
	for _, s := range h.Matching("") {
		if w, ok := strings.CutPrefix(s, "WARN "); ok {
			out = append(out, w)
		}
	}
	return out
}

func recordText(r slog.Record) string {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	return b.String()
}
