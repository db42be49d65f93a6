package gemini

import (
	"context"
	"slices"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// Model is a [nous.Model] on GenerateContent: what a runner (package
// github.com/nous-go/nous/agent) calls for the model's next reply. Each
// call is [Send], or [Stream] when the request streams, with the client
// and params [NewModel] was given, and the request's tools added to those
// of params.Config. A Model is never changed after NewModel: each call
// fills a copy of the params and of their Config, whose tools are a new
// slice, so one Model serves concurrent calls (each on its own context).
type Model struct {
	client *genai.Client
	params Params
}

var _ nous.Model = (*Model)(nil)

// NewModel returns the [Model] that sends params (the model, and a Config
// with max output tokens, thinking, tools of your own, ...; their contents
// and system instruction are filled from the context, as [Fill] does)
// through client. The caller keeps params and their Config: Model reads
// them, and never writes to them.
func NewModel(client *genai.Client, params Params) *Model {
	return &Model{client: client, params: params}
}

// Call implements [nous.Model]: req.Tools, as [Tools] converts them (one
// genai.Tool of their function declarations), go after the tools of
// params.Config (the API refuses two functions of one name, so give a
// tool in one place only), and the request is sent by [Send], or streamed
// by [Stream] to req.OnDelta when it is set. A stream cut short adds its
// partial reply to c, when there is one, after the step_end, and returns
// it with an error wrapping [nous.ErrInterrupted]. A tool that [Tools]
// refuses is an error wrapping [nous.ErrInvalidTool], and nothing is
// sent.
func (m *Model) Call(ctx context.Context, c *nous.Context, req nous.ModelRequest) (nous.Message, error) {
	params := m.params
	if len(req.Tools) > 0 {
		tools, err := Tools(req.Tools...)
		if err != nil {
			return nous.Message{}, err
		}
		var config genai.GenerateContentConfig
		if m.params.Config != nil {
			config = *m.params.Config
		}
		config.Tools = slices.Concat(config.Tools, tools)
		params.Config = &config
	}
	return adapt.Call(c, req, func() (nous.Message, error) {
		return Send(ctx, m.client, params, c)
	}, func(onDelta func(nous.Delta)) (nous.Message, error) {
		return Stream(ctx, m.client, params, c, onDelta)
	})
}
