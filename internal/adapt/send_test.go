package adapt_test

import (
	"errors"
	"testing"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Each way a model call can fail leaves the context as the call found it,
// but for the usage of a response that was billed.
func TestSend(t *testing.T) {
	refused, down, unreadable := errors.New("refused"), errors.New("down"), errors.New("unreadable")
	billed := nous.Usage{Requests: 1, InputTokens: 10, OutputTokens: 2, TotalTokens: 12}
	for _, tc := range []struct {
		name              string
		fill, send, read  error
		reply             nous.Message
		wantErr           error
		wantSent, wantAdd bool
		wantUsage         nous.Usage
	}{
		{name: "ok", reply: nous.AssistantMessage("hi"), wantSent: true, wantAdd: true, wantUsage: billed},
		{name: "refused", fill: refused, wantErr: refused},
		{name: "down", send: down, wantErr: down, wantSent: true},
		{name: "unreadable", read: unreadable, wantErr: unreadable, wantSent: true, wantUsage: billed},
		{name: "invalid message", reply: nous.Message{Role: "robot"}, wantErr: nous.ErrInvalidMessage, wantSent: true, wantUsage: billed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nous.NewContext()
			if err := c.AddMessage(nous.UserMessage("hello")); err != nil {
				t.Fatal(err)
			}
			base := []string{"base"}
			var sent []string
			fill := func(p *[]string, c *nous.Context) error {
				if tc.fill != nil {
					return tc.fill
				}
				*p = append(append([]string(nil), *p...), "filled")
				return nil
			}
			send := func(p []string) (int, error) { sent = p; return 7, tc.send }
			read := func(resp int) (nous.Message, nous.Usage, error) {
				if resp != 7 {
					t.Errorf("read got %d, not what send returned", resp)
				}
				return tc.reply, billed, tc.read
			}
			m, err := adapt.Send(c, nous.Step{Provider: "test", Model: "m"}, base, fill, send, read)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if (sent != nil) != tc.wantSent || tc.wantSent && len(sent) != 2 {
				t.Errorf("sent %v; want sent %v, filled", sent, tc.wantSent)
			}
			if len(base) != 1 {
				t.Errorf("the caller's params became %v", base)
			}
			if want := 1 + map[bool]int{true: 1}[tc.wantAdd]; c.Len() != want {
				t.Errorf("the view has %d messages, want %d", c.Len(), want)
			}
			if tc.wantAdd && m.Text() != "hi" || !tc.wantAdd && m.Role != "" {
				t.Errorf("returned %+v", m)
			}
			if c.Usage != tc.wantUsage {
				t.Errorf("usage %+v, want %+v", c.Usage, tc.wantUsage)
			}
			checkStep(t, c, tc.wantUsage, err, tc.wantAdd)
		})
	}
	if _, err := adapt.Send[int, int](nil, nous.Step{}, 0, nil, nil, nil); err == nil {
		t.Error("a nil context was sent")
	}
}

// checkStep checks that c's log ends with the step a model call ended, with
// its usage, its provider's and its model's names, and, when the call
// added no reply, its error's text, when the call was made.
func checkStep(t *testing.T, c *nous.Context, want nous.Usage, err error, added bool) {
	t.Helper()
	events := c.Log().Events()
	last := events[len(events)-1]
	if want == (nous.Usage{}) {
		if last.Type == nous.EventStepEnd {
			t.Errorf("a step ended for a call not made: %+v", last)
		}
		return
	}
	wantStep := nous.Step{Provider: "test", Model: "m", Usage: want}
	if !added {
		wantStep.Error = err.Error()
	}
	if s, ok := nous.StepOf(last); !ok || s != wantStep {
		t.Errorf("the log ends with %+v, not the step %+v", last, wantStep)
	}
}
