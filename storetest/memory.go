package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Memory is a [nous.Store] that keeps its logs in memory: the reference
// backend the suite checks itself with, and a store for tests. It copies
// what it is given and what it returns. The zero Memory is empty and ready.
type Memory struct {
	mu    sync.Mutex
	logs  map[uuid.UUID]*memoryLog
	names map[string]uuid.UUID // the logs with a name, by name
}

type memoryLog struct {
	info   nous.LogInfo
	state  []byte
	events []json.RawMessage
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{} }

// Append implements [nous.Store].
func (m *Memory) Append(ctx context.Context, b nous.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.Info.ID == uuid.Nil || b.Info.Incarnation == uuid.Nil {
		return errors.New("a batch of the nil log ID or incarnation")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[b.Info.ID]
	switch {
	case !ok && b.After != 0:
		return fmt.Errorf("log %s: %w", b.Info.ID, nous.ErrNotFound)
	case ok && (l.info.Head != b.After || l.info.Incarnation != b.Info.Incarnation):
		return fmt.Errorf("log %s: expected head %d incarnation %s, stored head %d incarnation %s: %w",
			b.Info.ID, b.After, b.Info.Incarnation, l.info.Head, l.info.Incarnation, nous.ErrConflict)
	case b.Info.Head != b.After+int64(len(b.Events)):
		return fmt.Errorf("log %s: head %d after %d with %d events", b.Info.ID, b.Info.Head, b.After, len(b.Events))
	case !ok && nous.CheckName(b.Info.Name, b.Info.Labels) != nil:
		return fmt.Errorf("log %s: %w", b.Info.ID, nous.CheckName(b.Info.Name, b.Info.Labels))
	case !ok && b.Info.Name != "" && m.names[b.Info.Name] != uuid.Nil:
		return fmt.Errorf("log %s: the name %q is log %s's: %w", b.Info.ID, b.Info.Name, m.names[b.Info.Name], nous.ErrConflict)
	case !ok:
		if m.logs == nil {
			m.logs, m.names = map[uuid.UUID]*memoryLog{}, map[string]uuid.UUID{}
		}
		l = &memoryLog{info: b.Info}
		l.info.Labels = nil // none, unless given some
		if len(b.Info.Labels) > 0 {
			l.info.Labels = maps.Clone(b.Info.Labels)
		}
		m.logs[b.Info.ID] = l
		if b.Info.Name != "" {
			m.names[b.Info.Name] = b.Info.ID
		}
	}
	l.events = append(l.events, clone(b.Events)...)
	l.state = bytes.Clone(b.State)
	l.info.Head, l.info.UpdatedAt = b.Info.Head, b.Info.UpdatedAt
	return nil
}

// Read implements [nous.Store].
func (m *Memory) Read(ctx context.Context, id uuid.UUID, after int64) (nous.Stored, error) {
	if err := ctx.Err(); err != nil {
		return nous.Stored{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[id]
	if !ok {
		return nous.Stored{}, fmt.Errorf("log %s: %w", id, nous.ErrNotFound)
	}
	after = min(max(after, 0), int64(len(l.events)))
	return nous.Stored{Info: l.infoCopy(), State: bytes.Clone(l.state), Events: clone(l.events[after:])}, nil
}

// infoCopy returns l's info, its labels a copy.
func (l *memoryLog) infoCopy() nous.LogInfo {
	info := l.info
	info.Labels = maps.Clone(l.info.Labels)
	return info
}

// Lookup implements [nous.Store].
func (m *Memory) Lookup(ctx context.Context, name string) (nous.LogInfo, error) {
	if err := ctx.Err(); err != nil {
		return nous.LogInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.names[name]
	if !ok || name == "" {
		return nous.LogInfo{}, fmt.Errorf("no log is named %q: %w", name, nous.ErrNotFound)
	}
	return m.logs[id].infoCopy(), nil
}

// clone returns a copy of raw and of each of its elements.
func clone(raw []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(raw))
	for i, b := range raw {
		out[i] = bytes.Clone(b)
	}
	return out
}

// List implements [nous.Store].
func (m *Memory) List(ctx context.Context, opts nous.ListOptions) iter.Seq2[nous.LogInfo, error] {
	return func(yield func(nous.LogInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nous.LogInfo{}, err)
			return
		}
		m.mu.Lock()
		var infos []nous.LogInfo
		for id, l := range m.logs {
			if bytes.Compare(id[:], opts.After[:]) > 0 && l.info.HasLabels(opts.Labels) {
				infos = append(infos, l.infoCopy())
			}
		}
		m.mu.Unlock()
		slices.SortFunc(infos, func(a, b nous.LogInfo) int { return bytes.Compare(a.ID[:], b.ID[:]) })
		if opts.Limit > 0 && len(infos) > opts.Limit {
			infos = infos[:opts.Limit]
		}
		for _, info := range infos {
			if err := ctx.Err(); err != nil {
				yield(nous.LogInfo{}, err)
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

// Delete implements [nous.Store].
func (m *Memory) Delete(ctx context.Context, id uuid.UUID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[id]
	if !ok {
		return fmt.Errorf("log %s: %w", id, nous.ErrNotFound)
	}
	delete(m.names, l.info.Name)
	delete(m.logs, id)
	return nil
}
