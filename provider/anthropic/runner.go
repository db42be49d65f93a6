package anthropic

import (
	"context"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Model is a [nous.Model] on the Messages API: what a runner (package
// github.com/nous-go/nous/agent) calls for the model's next reply. Each
// call is [Send], or [Stream] when the request streams, with the params
// and request options [NewModel] was given, and the request's tools added
// to theirs. A Model is never changed after NewModel: each call fills a
// copy of the params, whose tools are a new slice, so one Model serves
// concurrent calls (each on its own context).
type Model struct {
	client anthropic.Client
	params anthropic.MessageNewParams
	opts   []option.RequestOption
}

var _ nous.Model = (*Model)(nil)

// NewModel returns the [Model] that sends params (the model, max tokens,
// thinking, tools of your own, ...; their messages and system prompt are
// filled from the context, as [Fill] does) through client with opts. The
// caller keeps params and opts: Model reads them, and never writes to
// them.
func NewModel(client anthropic.Client, params anthropic.MessageNewParams, opts ...option.RequestOption) *Model {
	return &Model{client: client, params: params, opts: slices.Clone(opts)}
}

// Call implements [nous.Model]: req.Tools, as [Tools] converts them, go
// after the params' tools (the API refuses two tools of one name, so give
// a tool in one place only), and the request is sent by [Send], or
// streamed by [Stream] to req.OnDelta when it is set. A stream cut short
// adds its partial reply to c, when there is one, after the step_end, and
// returns it with an error wrapping [nous.ErrInterrupted]. A tool that
// [Tools] refuses is an error wrapping [nous.ErrInvalidTool], and nothing
// is sent.
func (m *Model) Call(ctx context.Context, c *nous.Context, req nous.ModelRequest) (nous.Message, error) {
	params := m.params
	if len(req.Tools) > 0 {
		tools, err := Tools(req.Tools...)
		if err != nil {
			return nous.Message{}, err
		}
		params.Tools = slices.Concat(m.params.Tools, tools)
	}
	return adapt.Call(c, req, func() (nous.Message, error) {
		return Send(ctx, m.client, params, c, m.opts...)
	}, func(onDelta func(nous.Delta)) (nous.Message, error) {
		return Stream(ctx, m.client, params, c, onDelta, m.opts...)
	})
}
