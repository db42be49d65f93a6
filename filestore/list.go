package filestore

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// List implements [nous.Store].
func (s *Store) List(ctx context.Context, opts nous.ListOptions) iter.Seq2[nous.LogInfo, error] {
	return func(yield func(nous.LogInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nous.LogInfo{}, err)
			return
		}
		names, err := os.ReadDir(s.dir)
		if err != nil {
			yield(nous.LogInfo{}, fmt.Errorf("filestore: %w", err))
			return
		}
		var ids []uuid.UUID
		for _, n := range names {
			name, ok := strings.CutSuffix(n.Name(), suffix)
			if id, err := uuid.Parse(name); ok && err == nil && bytes.Compare(id[:], opts.After[:]) > 0 {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
		n := 0
		for _, id := range ids {
			if opts.Limit > 0 && n == opts.Limit {
				return
			}
			if err := ctx.Err(); err != nil {
				yield(nous.LogInfo{}, err)
				return
			}
			s.mu.Lock()
			e, err := s.settled(ctx, id)
			info := nous.LogInfo{ID: id} // with an error: which log, so a caller can page past it
			if e != nil {
				info = infoOf(e)
			}
			s.mu.Unlock()
			if e == nil && err == nil || err == nil && !info.HasLabels(opts.Labels) {
				continue // deleted, or never whole; or not selected
			}
			n++
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}
