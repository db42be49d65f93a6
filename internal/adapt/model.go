package adapt

import (
	"errors"

	"github.com/nous-go/nous"
)

// Call is what every provider's [nous.Model] does with one call: send
// without streaming when req.OnDelta is nil, else stream to it, and add
// the partial reply of a stream cut short (an error wrapping
// nous.ErrInterrupted with a message that is not the zero Message) to c,
// after the step_end the stream logged, as the Stream functions' callers
// add it. An error adding it is joined to the stream's.
func Call(c *nous.Context, req nous.ModelRequest, send func() (nous.Message, error), stream func(onDelta func(nous.Delta)) (nous.Message, error)) (nous.Message, error) {
	if req.OnDelta == nil {
		return send()
	}
	m, err := stream(req.OnDelta)
	if err == nil || !errors.Is(err, nous.ErrInterrupted) || m.Role == "" {
		return m, err
	}
	if aerr := c.AddMessage(m); aerr != nil {
		return m, errors.Join(err, aerr)
	}
	return m, err
}
