package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/nous-go/nous"
)

// Delete implements [nous.Store]: under the log's lock, so that no process
// writes it as it goes; then its name is freed.
func (s *Store) Delete(ctx context.Context, id uuid.UUID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("filestore: the store is closed")
	}
	release, err := s.acquire(ctx, id) // no save of this store writes it meanwhile
	if err != nil {
		return err
	}
	defer release()
	// The file goes whatever it holds: a poisoned or corrupt log may be
	// deleted too, without being read whole (its name, if its first frame
	// tells it, is freed; a name file left names nothing).
	lf, _, err := s.lockLog(ctx, id)
	if err != nil {
		return err
	}
	defer lf.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(id)
	name := ""
	if first, err := firstFrameInfo(lf); err == nil {
		name = first.Name
	}
	err = os.Remove(s.path(id))
	if errors.Is(err, os.ErrNotExist) { // another process deleted it as this one waited
		return fmt.Errorf("filestore: log %s: %w", id, nous.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("filestore: log %s: %w", id, err)
	}
	s.notify(id)
	if err := s.syncDir(); err != nil {
		return err
	}
	if name != "" {
		return s.unname(ctx, id, name)
	}
	return nil
}
