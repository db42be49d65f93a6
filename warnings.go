package nous

import (
	"slices"
	"sync"
)

// warnDropped warns, in one line on the context's logger, of the values s
// dropped for the method op because JSON cannot hold them: their paths,
// never the values. A path the context named before is not named again: a
// handle kept in deps gives one warning, not one per save. Secrets are
// not warned of: dropping a key the rule names, and masking a secret
// value, is what the documentation promises.
func (c *Context) warnDropped(s *sanitizer, op string) {
	if len(s.Dropped) == 0 {
		return
	}
	if c.persist.warned == nil { // the zero Context
		c.persist.warned = new(warnedPaths)
	}
	if paths := c.persist.warned.fresh(s.Dropped); len(paths) > 0 {
		slices.Sort(paths)
		c.logger().Warn("nous: "+op+" dropped values", "unencodable", paths)
	}
}

// maxWarned bounds the paths a context remembers it named: past it, paths
// are named every time.
const maxWarned = 1024

// warnedPaths are the paths a context's warnings named. It is safe for
// concurrent use, as Serialize of an idle context is.
type warnedPaths struct {
	mu    sync.Mutex
	paths map[string]struct{}
}

// fresh returns those of paths not named before, and remembers them.
func (w *warnedPaths) fresh(paths []string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, p := range paths {
		if _, seen := w.paths[p]; seen {
			continue
		}
		out = append(out, p)
		if len(w.paths) < maxWarned {
			if w.paths == nil {
				w.paths = map[string]struct{}{}
			}
			w.paths[p] = struct{}{}
		}
	}
	return out
}
