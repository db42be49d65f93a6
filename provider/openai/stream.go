package openai

import (
	"context"
	"iter"
)

// untilDone returns the events of seq until ctx is done: then ctx's error,
// before the next event. The SDK reads the body through a buffer, so that
// events it read before the context was cancelled would still come; a
// stream cancelled from a delta callback stops at once instead.
func untilDone[E any](ctx context.Context, seq iter.Seq2[E, error]) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		for e, err := range seq {
			if err == nil && ctx.Err() != nil {
				var zero E
				yield(zero, context.Cause(ctx))
				return
			}
			if !yield(e, err) {
				return
			}
		}
	}
}
