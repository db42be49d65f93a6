package adapt

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/nous-go/nous"
)

// Accumulator reads one streamed reply, event by event: what every
// provider's stream reader is.
type Accumulator[E any] interface {
	// Add reads the next event. An error event of the API, or an event
	// out of place, is an error; what came before it stays readable.
	Add(E) error
	// Message returns the reply, as the import of the same response not
	// streamed gives it, and its usage. A stream that has not ended is an
	// error wrapping nous.ErrInterrupted.
	Message() (nous.Message, nous.Usage, error)
	// Partial returns what the stream gave so far, as the caller can add
	// it (nous.MetadataInterrupted), and the usage that arrived.
	Partial() (nous.Message, nous.Usage)
}

// Stream is [Send] on a streamed reply: params filled from c by fill;
// the stream opened by open; each event read by acc, until ctx is done
// (the events an SDK read ahead of a cancel from a delta callback are not
// read). A stream that ends
// has its usage and message added to c, as Send would. One that stops
// before its end (an error, a cancelled context, a cut connection, an
// error event, or events that end without the last) has the usage that
// arrived added, and returns acc's partial message, which it does not add,
// with an error wrapping nous.ErrInterrupted and the cause. A stream whose
// last event came has ended, whatever the connection does after it. An
// error before any event came (the API refused the request) changes
// nothing.
func Stream[P, E any](ctx context.Context, c *nous.Context, step nous.Step, params P, fill func(*P, *nous.Context) error, open func(P) iter.Seq2[E, error], acc Accumulator[E]) (nous.Message, error) {
	if c == nil {
		return nous.Message{}, errors.New("nous: a model call needs a context to send")
	}
	if err := fill(&params, c); err != nil {
		return nous.Message{}, err
	}
	var cause error
	events, event := 0, false // event: the cause is an event's
	for e, err := range open(params) {
		if err == nil && ctx.Err() != nil {
			err = context.Cause(ctx) // an SDK reads ahead: what it read after the cancel is not given
		}
		if err != nil {
			cause = err
			break
		}
		events++
		if err := acc.Add(e); err != nil {
			cause, event = err, true
			break
		}
	}
	if cause != nil && events == 0 {
		return nous.Message{}, cause
	}
	if cause == nil || !event {
		// A stream whose last event came is whole, even when the
		// connection is lost after it (an API that sends no end of stream
		// of its own).
		m, usage, err := acc.Message()
		if !errors.Is(err, nous.ErrInterrupted) {
			return settle(c, step, m, usage, err)
		}
		if cause == nil {
			cause = err
		}
	}
	m, usage := acc.Partial()
	if !errors.Is(cause, nous.ErrInterrupted) {
		cause = fmt.Errorf("nous: the reply stopped after %d events: %w: %w", events, nous.ErrInterrupted, cause)
	}
	step.Usage, step.Error = usage, cause.Error()
	c.EndStep(step)
	return m, cause
}

// Seq returns the events of an SDK's stream (openai-go's and
// anthropic-sdk-go's ssestream.Stream) as a sequence: each event, then the
// stream's error if it has one. The stream is closed when the sequence
// ends or its caller stops.
func Seq[E any](s interface {
	Next() bool
	Current() E
	Err() error
	Close() error
}) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		defer s.Close()
		for s.Next() {
			if !yield(s.Current(), nil) {
				return
			}
		}
		if err := s.Err(); err != nil {
			var zero E
			yield(zero, err)
		}
	}
}
