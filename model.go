package nous

import "context"

// Model is one model behind one provider's API, as a provider module
// adapts it: what a runner calls for the model's next reply, whatever the
// provider. Each provider module gives one per API it adapts.
type Model interface {
	// Call sends c's view, with the tools of req, to the model, adds its
	// reply to c and ends the step with the call's usage
	// ([Context.EndStep]), as the provider modules' Send functions do,
	// and returns the reply. With req.OnDelta set it streams, passing
	// each piece of the reply to OnDelta as it comes; a stream cut short
	// (ctx done, the connection lost, an error event) adds what came, a
	// message marked [MetadataInterrupted], and returns an error wrapping
	// [ErrInterrupted]. A view the adapter refuses to send adds nothing.
	Call(ctx context.Context, c *Context, req ModelRequest) (Message, error)
}

// ModelRequest is what a runner asks of one [Model.Call] besides the view.
type ModelRequest struct {
	// Tools are the tools the model may call, beside any the adapter's
	// own parameters give.
	Tools []Tool
	// OnDelta, when set, makes the call stream, and receives each piece
	// of the reply as it comes, on the goroutine that reads the stream.
	OnDelta func(Delta)
}
