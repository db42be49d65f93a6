package adapt_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// events is an accumulator of a scripted stream of words: the reply is
// whole once "." came, an event "!" is an error event.
type events struct {
	words  []string
	ended  bool
	broken error
}

var errEvent = errors.New("error event")

func (a *events) Add(w string) error {
	if w == "!" {
		return errEvent
	}
	if w == "." {
		a.ended = true
		return nil
	}
	a.words = append(a.words, w)
	return nil
}

func (a *events) usage() nous.Usage {
	return nous.Usage{Requests: 1, OutputTokens: len(a.words), TotalTokens: len(a.words)}
}

func (a *events) Message() (nous.Message, nous.Usage, error) {
	if !a.ended {
		return nous.Message{}, a.usage(), errors.Join(errors.New("no end"), nous.ErrInterrupted)
	}
	if a.broken != nil {
		return nous.Message{}, a.usage(), a.broken
	}
	var text string
	for _, w := range a.words {
		text += w
	}
	return nous.AssistantMessage(text), a.usage(), nil
}

func (a *events) Partial() (nous.Message, nous.Usage) {
	if len(a.words) == 0 {
		return nous.Message{}, a.usage()
	}
	m, _, _ := (&events{words: a.words, ended: true}).Message()
	m.Metadata = map[string]any{nous.MetadataInterrupted: true}
	return m, a.usage()
}

// seq plays words, then err if it is not nil.
func seq(err error, words ...string) func([]string) iter.Seq2[string, error] {
	return func([]string) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for _, w := range words {
				if !yield(w, nil) {
					return
				}
			}
			if err != nil {
				yield("", err)
			}
		}
	}
}

// Each way a stream can end leaves the context with the reply, or with
// only the usage that arrived and a partial reply for the caller; a
// refusal before any event changes nothing.
func TestStream(t *testing.T) {
	refused, cut, unreadable := errors.New("refused"), errors.New("connection reset"), errors.New("unreadable")
	for _, tc := range []struct {
		name        string
		fill        error
		open        func([]string) iter.Seq2[string, error]
		broken      error
		wantErr     []error
		wantText    string // of the message returned
		wantAdded   bool
		wantPartial bool
		wantUsage   nous.Usage
	}{
		{name: "whole", open: seq(nil, "a", "b", "."), wantText: "ab", wantAdded: true,
			wantUsage: nous.Usage{Requests: 1, OutputTokens: 2, TotalTokens: 2}},
		{name: "refused by fill", fill: refused, open: seq(nil, "a", "."), wantErr: []error{refused}},
		{name: "refused by the API", open: seq(refused), wantErr: []error{refused}},
		{name: "cut", open: seq(cut, "a", "b"), wantErr: []error{nous.ErrInterrupted, cut}, wantText: "ab", wantPartial: true,
			wantUsage: nous.Usage{Requests: 1, OutputTokens: 2, TotalTokens: 2}},
		{name: "ended without its last event", open: seq(nil, "a"), wantErr: []error{nous.ErrInterrupted}, wantText: "a", wantPartial: true,
			wantUsage: nous.Usage{Requests: 1, OutputTokens: 1, TotalTokens: 1}},
		{name: "error event", open: seq(nil, "a", "!", "b", "."), wantErr: []error{nous.ErrInterrupted, errEvent}, wantText: "a", wantPartial: true,
			wantUsage: nous.Usage{Requests: 1, OutputTokens: 1, TotalTokens: 1}},
		{name: "unreadable", open: seq(nil, "a", "."), broken: unreadable, wantErr: []error{unreadable},
			wantUsage: nous.Usage{Requests: 1, OutputTokens: 1, TotalTokens: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nous.NewContext()
			if err := c.AddMessage(nous.UserMessage("hello")); err != nil {
				t.Fatal(err)
			}
			fill := func(p *[]string, _ *nous.Context) error { return tc.fill }
			m, err := adapt.Stream(context.Background(), c, nous.Step{Provider: "test", Model: "m"}, nil, fill, tc.open, &events{broken: tc.broken})
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to wrap %v", err, want)
				}
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("err = %v", err)
			}
			if m.Text() != tc.wantText || m.Interrupted() != tc.wantPartial {
				t.Errorf("returned %+v, want text %q, interrupted %v", m, tc.wantText, tc.wantPartial)
			}
			if want := 1 + map[bool]int{true: 1}[tc.wantAdded]; c.Len() != want {
				t.Errorf("the view has %d messages, want %d", c.Len(), want)
			}
			if c.Usage != tc.wantUsage {
				t.Errorf("usage %+v, want %+v", c.Usage, tc.wantUsage)
			}
			checkStep(t, c, tc.wantUsage, err, tc.wantAdded)
		})
	}
	if _, err := adapt.Stream[int, int](context.Background(), nil, nous.Step{}, 0, nil, nil, nil); err == nil {
		t.Error("a nil context was streamed into")
	}
}

// stream is an SDK's stream of ints, closed once.
type stream struct {
	items  []int
	err    error
	i      int
	closed int
}

func (s *stream) Next() bool   { s.i++; return s.i <= len(s.items) }
func (s *stream) Current() int { return s.items[s.i-1] }
func (s *stream) Err() error   { return s.err }
func (s *stream) Close() error { s.closed++; return nil }

// Seq gives each item, then the stream's error, and closes the stream,
// also when its caller stops early.
func TestSeq(t *testing.T) {
	down := errors.New("down")
	for _, tc := range []struct {
		name  string
		s     *stream
		stop  int // stop after this many items; 0 reads all
		want  []int
		wantE error
	}{
		{name: "all", s: &stream{items: []int{1, 2, 3}}, want: []int{1, 2, 3}},
		{name: "error at the end", s: &stream{items: []int{1}, err: down}, want: []int{1}, wantE: down},
		{name: "caller stops", s: &stream{items: []int{1, 2, 3}, err: down}, stop: 2, want: []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			var gotErr error
			for v, err := range adapt.Seq(tc.s) {
				if err != nil {
					gotErr = err
					continue
				}
				got = append(got, v)
				if len(got) == tc.stop {
					break
				}
			}
			if len(got) != len(tc.want) || gotErr != tc.wantE {
				t.Errorf("got %v, %v; want %v, %v", got, gotErr, tc.want, tc.wantE)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
			if tc.s.closed != 1 {
				t.Errorf("closed %d times", tc.s.closed)
			}
		})
	}
}

// A context cancelled during the stream (from a delta callback, say)
// stops it before the next event, even one the SDK has read already.
func TestStreamCancelled(t *testing.T) {
	c := nous.NewContext()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := 0
	open := func([]string) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for _, w := range []string{"a", "b", "."} {
				read++
				if w == "b" {
					cancel()
				}
				if !yield(w, nil) {
					return
				}
			}
		}
	}
	m, err := adapt.Stream(ctx, c, nous.Step{Provider: "test", Model: "m"}, nil, func(*[]string, *nous.Context) error { return nil }, open, &events{})
	if !errors.Is(err, nous.ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if m.Text() != "a" || read != 2 || c.Len() != 0 {
		t.Errorf("returned %q after reading %d events; the view has %d messages", m.Text(), read, c.Len())
	}
}
