package nous

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// LogRecorder is a slog.Handler that keeps every record it is given, for the
// tests of both packages (nous and nous_test) that check what was logged.
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
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if r.Level == slog.LevelWarn {
			out = append(out, recordText(r))
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
