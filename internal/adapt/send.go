package adapt

import (
	"errors"

	"github.com/nous-go/nous"
)

// Send is the step every provider's Send takes: params, a copy of the
// caller's, filled from c by fill; sent by send; the response read by
// read; its message added to c, and step ended with its usage
// ([nous.Context.EndStep]: step names the provider and the model), even
// when the response cannot be read (it is billed all the same; the step
// says why there is no reply). A request fill refuses
// is never sent; an error of send changes nothing.
func Send[P, R any](c *nous.Context, step nous.Step, params P, fill func(*P, *nous.Context) error, send func(P) (R, error), read func(R) (nous.Message, nous.Usage, error)) (nous.Message, error) {
	if c == nil {
		return nous.Message{}, errors.New("nous: a model call needs a context to send")
	}
	if err := fill(&params, c); err != nil {
		return nous.Message{}, err
	}
	resp, err := send(params)
	if err != nil {
		return nous.Message{}, err
	}
	m, usage, err := read(resp)
	return settle(c, step, m, usage, err)
}

// settle ends a model call whose reply was read: its message added to c
// unless read failed (err), and step ended with its usage
// ([nous.Context.EndStep]), which is billed all the same, and err's text.
func settle(c *nous.Context, step nous.Step, m nous.Message, usage nous.Usage, err error) (nous.Message, error) {
	if err == nil {
		err = c.AddMessage(m)
	}
	step.Usage = usage
	if err != nil {
		step.Error = err.Error()
	}
	c.EndStep(step)
	if err != nil {
		return nous.Message{}, err
	}
	return m, nil
}
