package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nous-go/nous"
)

// drive takes the steps that remain of s's turn, as its log says
// ([nous.Context.Pending]), until it ends, waits for a decision, or
// fails.
func (r *Runner) drive(ctx context.Context, s *turnState) (*Turn, error) {
	for {
		if err := ctx.Err(); err != nil {
			return turnOf(s), fmt.Errorf("agent: run %q: %w", s.name, err)
		}
		if check := s.c.CancellationCheck; check != nil {
			if err := check(); err != nil {
				return turnOf(s), fmt.Errorf("agent: run %q: cancelled: %w", s.name, err)
			}
		}
		p := s.c.Pending()
		switch {
		case len(p.Calls) > 0:
			waiting, err := r.calls(ctx, s, p.Calls)
			if err != nil || len(waiting) > 0 {
				t := turnOf(s)
				t.Waiting = waiting
				return t, err
			}
		case p.CallModel:
			if s.c.MaxIterationsReached() {
				return turnOf(s), fmt.Errorf("agent: run %q: %d model calls: %w", s.name, s.c.Iteration, ErrMaxIterations)
			}
			if err := r.callModel(ctx, s); err != nil {
				return turnOf(s), err
			}
		default:
			return turnOf(s), nil
		}
	}
}

// callModel calls the model for its next reply, compacting first when
// the runner does, and saves the reply: whole, or as far as a stream
// that ctx cut got, saved all the same. On a conflict the reply is not
// stored: the session as stored says what remains.
func (r *Runner) callModel(ctx context.Context, s *turnState) error {
	if r.Compact != nil {
		if err := r.Compact(ctx, s.c); err != nil {
			return fmt.Errorf("agent: run %q: compact: %w", s.name, err)
		}
	}
	req := nous.ModelRequest{Tools: make([]nous.Tool, len(r.Tools))}
	for i, t := range r.Tools {
		req.Tools[i] = t.Def
	}
	if r.Stream || s.c.Stream {
		c := s.c
		req.OnDelta = func(d nous.Delta) {
			if r.OnDelta != nil {
				r.OnDelta(d)
			}
			c.EmitDelta(d)
		}
	}
	s.c.IncrementIteration()
	m, err := r.Model.Call(ctx, s.c, req)
	if err == nil {
		s.c.Emit(nous.CallbackLLMNewMessage, m)
	}
	if _, serr := r.save(ctx, s, nil); serr != nil {
		return errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("agent: run %q: model call: %w", s.name, err)
	}
	return nil
}

// save stores what s.c holds that the store lacks, trying again after a
// failure whose outcome is unknown (the context finds a batch that
// landed), within the runner's backoff, even once ctx is done (what
// happened is recorded before the turn returns). On a conflict, another
// writer saved the session (or the batch's key: [nous.ErrLanded]): s.c
// becomes the session as stored, redo adds to it again what is not stored
// (nil: nothing, the turn goes on from what the log says), and the save is
// tried again. It reports whether s.c was
// loaded again.
func (r *Runner) save(ctx context.Context, s *turnState, redo func(*nous.Context) error) (reloaded bool, err error) {
	if s.store == nil {
		return false, nil
	}
	sctx, cancel := saveContext(ctx)
	defer cancel()
	b := r.backoff()
	for try := 0; ; try++ {
		err := s.c.Save(sctx, s.store)
		switch {
		case err == nil:
			return reloaded, nil
		case try+1 >= b.Tries || errors.Is(err, nous.ErrNotFound):
			return reloaded, fmt.Errorf("agent: run %q: save: %w", s.name, err)
		}
		if !errors.Is(err, nous.ErrConflict) {
			if err := b.wait(sctx, try); err != nil {
				return reloaded, fmt.Errorf("agent: run %q: save: %w", s.name, err)
			}
			continue // unknown outcome: the same context tries again, and finds its batch if it landed
		}
		if err := b.wait(sctx, 0); err != nil { // a race lost, not a store in trouble: the wait does not grow
			return reloaded, fmt.Errorf("agent: run %q: save: %w", s.name, err)
		}
		if err := s.catchUp(sctx); err != nil {
			return reloaded, err
		}
		c := s.c
		reloaded = true
		if redo == nil {
			return true, nil
		}
		if err := redo(c); err != nil {
			return true, err
		}
	}
}

// catchUp brings s.c to the session as stored, dropping what it has not
// saved: [nous.Context.Discard] and a Refresh, which cost what changed,
// or, when they cannot, a load of the session.
func (s *turnState) catchUp(ctx context.Context) error {
	if s.c.Discard() == nil && s.c.Refresh(ctx, s.store) == nil {
		return nil
	}
	c, err := load(ctx, s.store, s.name)
	if err != nil {
		return fmt.Errorf("agent: run %q: load after a conflict: %w", s.name, err)
	}
	carry(s.c, c)
	s.c = c
	return nil
}

// saveContext returns the context of a save within a turn: ctx, or, once
// ctx is done, one that is not, for a few seconds, so that what happened
// before ctx ended (a reply cut short, a tool's result) is stored.
func saveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

// carry gives to, a context loaded again, the runtime fields of from,
// which no store keeps.
func carry(from, to *nous.Context) {
	to.Stream, to.CancellationCheck, to.Callbacks, to.Notify = from.Stream, from.CancellationCheck, from.Callbacks, from.Notify
	to.Observer, to.ApprovalHandler, to.Logger, to.Redact = from.Observer, from.ApprovalHandler, from.Logger, from.Redact
}

// backoff returns the runner's backoff with its defaults filled in.
func (r *Runner) backoff() Backoff {
	b := r.Backoff
	if b.Min <= 0 {
		b.Min = time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = time.Second
	}
	if b.Tries <= 0 {
		b.Tries = 64
	}
	return b
}

// wait sleeps the n-th failure's random wait, or until ctx is done.
func (b Backoff) wait(ctx context.Context, n int) error {
	d := b.Min << min(n, 30)
	if d <= 0 || d > b.Max {
		d = b.Max
	}
	t := time.NewTimer(rand.N(d) + 1)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
