package adapt

import (
	"errors"

	"github.com/nous-go/nous"
)

// Send is the step every provider's Send takes: params, a copy of the
// caller's, filled from c by fill; sent by send; the response read by
// read; its usage added to c, even when the response cannot be read (it is
// billed all the same), and its message added to c. A request fill refuses
// is never sent; an error of send changes nothing.
func Send[P, R any](c *nous.Context, params P, fill func(*P, *nous.Context) error, send func(P) (R, error), read func(R) (nous.Message, nous.Usage, error)) (nous.Message, error) {
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
	return settle(c, m, usage, err)
}

// settle ends a model call whose reply was read: its usage added to c,
// as it is billed all the same, and its message too, unless read failed
// (err).
func settle(c *nous.Context, m nous.Message, usage nous.Usage, err error) (nous.Message, error) {
	c.AddUsage(usage)
	if err != nil {
		return nous.Message{}, err
	}
	if err := c.AddMessage(m); err != nil {
		return nous.Message{}, err
	}
	return m, nil
}
