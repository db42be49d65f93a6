package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"google.golang.org/genai"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ContentStream reads one streamed GenerateContent reply, chunk by chunk,
// as client.Models.GenerateContentStream yields them: it gives a
// [nous.Delta] for each piece as it comes, and at the end the message and
// usage [Message] gives for the same reply not streamed. A runtime that
// reads the stream itself adds each chunk; [Stream] does it all. The zero
// value is ready to use; a ContentStream reads one reply, on one
// goroutine.
//
// The chunks of candidate 0 (the one [Message] reads) are merged into the
// parts of one response, which [Message] then reads: consecutive text
// parts of one kind (thoughts, or text) are one part, their texts joined,
// carrying the thought signature that came on any of them; a part whose
// signature would be the second of its run begins a part of its own. So a
// signature that comes on an empty text part at the end of a run (where
// Gemini 3 puts it when streaming) signs the run's part, as the response
// not streamed carries it; one that comes after a function call, or after
// a run already signed, stays an empty text part that carries it, which
// Message keeps. An empty text part without a signature is nothing.
// Function calls, images and files, and the parts Message keeps whole,
// come whole in one chunk and are parts as they came. The usage is that of
// the last chunk that has one (the API's counts are running totals).
//
// The reply ends with a finish reason on candidate 0, or with a prompt the
// API blocked (promptFeedback with a blockReason, and no candidate); chunks
// after it (a last usage) are read too.
type ContentStream struct {
	// OnDelta, when set, is called with each delta, in the order of the
	// stream, from Add: a text or thought part's text (DeltaText,
	// DeltaThinking, Index the n-th text or thought part of the merged
	// reply), and each function call, whole (DeltaToolCall, Index the n-th
	// call, Text its arguments as Message writes them, ToolCallID the ID
	// the API gave, empty when it gave none, and ToolName).
	OnDelta func(nous.Delta)

	chunks   int
	pieces   []piece
	texts    int // text pieces so far
	thoughts int // thought pieces so far
	calls    int // function calls so far

	candidate bool // candidate 0 came
	content   bool // with content
	finish    genai.FinishReason
	ended     bool
	usage     *genai.GenerateContentResponseUsageMetadata
	model     string
	id        string
	feedback  *genai.GenerateContentResponsePromptFeedback
}

// piece is a part of the merged reply: a run of text or thought parts
// (text), or a part as it came (whole).
type piece struct {
	whole   *genai.Part
	text    []byte
	thought bool
	sig     []byte
}

// Add reads the next chunk of the stream. A function call whose arguments
// come in pieces (the Vertex AI option StreamFunctionCallArguments) is an
// error wrapping [ErrUnsupported]: leave the option off. What came before
// an error stays readable. Add keeps parts of chunk: the caller does not
// change a chunk once added. A nil chunk is nothing.
func (s *ContentStream) Add(chunk *genai.GenerateContentResponse) error {
	if chunk == nil {
		return nil
	}
	s.chunks++
	if chunk.UsageMetadata != nil {
		s.usage = chunk.UsageMetadata
	}
	if chunk.ModelVersion != "" {
		s.model = chunk.ModelVersion
	}
	if chunk.ResponseID != "" {
		s.id = chunk.ResponseID
	}
	if chunk.PromptFeedback != nil {
		s.feedback = chunk.PromptFeedback
		if chunk.PromptFeedback.BlockReason != "" {
			s.ended = true
		}
	}
	var cand *genai.Candidate
	for _, c := range chunk.Candidates {
		if c != nil && c.Index == 0 {
			cand = c
			break
		}
	}
	if cand == nil {
		return nil
	}
	s.candidate = true
	if cand.Content != nil {
		s.content = true
		for _, p := range cand.Content.Parts {
			if err := s.addPart(p); err != nil {
				return err
			}
		}
	}
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		s.finish = cand.FinishReason
		s.ended = true
	}
	return nil
}

// addPart merges p into the reply's pieces, and gives its delta.
func (s *ContentStream) addPart(p *genai.Part) error {
	if p == nil {
		return nil
	}
	switch kind := kindOf(p); kind {
	case kindText, kindThought:
		if p.Text == "" && len(p.ThoughtSignature) == 0 {
			return nil
		}
		var last *piece
		if n := len(s.pieces); n > 0 && s.pieces[n-1].whole == nil && s.pieces[n-1].thought == p.Thought {
			last = &s.pieces[n-1]
		}
		if last == nil || len(last.sig) > 0 && len(p.ThoughtSignature) > 0 {
			s.pieces = append(s.pieces, piece{thought: p.Thought})
			last = &s.pieces[len(s.pieces)-1]
			if p.Thought {
				s.thoughts++
			} else {
				s.texts++
			}
		}
		last.text = append(last.text, p.Text...)
		if len(p.ThoughtSignature) > 0 {
			last.sig = p.ThoughtSignature
		}
		if p.Text != "" && s.OnDelta != nil {
			if p.Thought {
				s.OnDelta(nous.Delta{Kind: nous.DeltaThinking, Index: s.thoughts - 1, Text: p.Text})
			} else {
				s.OnDelta(nous.Delta{Kind: nous.DeltaText, Index: s.texts - 1, Text: p.Text})
			}
		}
		return nil
	case kindCall:
		call := p.FunctionCall
		if len(call.PartialArgs) > 0 || call.WillContinue != nil && *call.WillContinue {
			return fmt.Errorf("gemini: function call %q with its arguments in pieces (StreamFunctionCallArguments): leave the option off to stream: %w", call.Name, ErrUnsupported)
		}
		s.calls++
		if s.OnDelta != nil {
			args, err := json.Marshal(call.Args)
			if err != nil || call.Args == nil {
				args = []byte("{}") // Message refuses what JSON cannot hold; the delta is for show
			}
			s.OnDelta(nous.Delta{Kind: nous.DeltaToolCall, Index: s.calls - 1, Text: string(args), ToolCallID: call.ID, ToolName: call.Name})
		}
	}
	cp := *p
	s.pieces = append(s.pieces, piece{whole: &cp})
	return nil
}

// response returns the response the chunks so far make: the one the API
// gives for the same reply not streamed, once the stream has ended.
func (s *ContentStream) response() *genai.GenerateContentResponse {
	resp := &genai.GenerateContentResponse{ModelVersion: s.model, ResponseID: s.id, PromptFeedback: s.feedback, UsageMetadata: s.usage}
	if !s.candidate {
		return resp
	}
	cand := &genai.Candidate{FinishReason: s.finish}
	if s.content {
		parts := make([]*genai.Part, 0, len(s.pieces))
		for i := range s.pieces {
			p := &s.pieces[i]
			if p.whole != nil {
				parts = append(parts, p.whole)
				continue
			}
			parts = append(parts, &genai.Part{Text: string(p.text), Thought: p.thought, ThoughtSignature: p.sig})
		}
		cand.Content = &genai.Content{Role: genai.RoleModel, Parts: parts}
	}
	resp.Candidates = []*genai.Candidate{cand}
	return resp
}

// Message returns the reply and its usage, as [Message] gives them for the
// same response not streamed (its errors too: a blocked prompt is an error
// wrapping [ErrNoCandidate], with the usage). A stream that has not ended
// (no finish reason yet) is an error wrapping [nous.ErrInterrupted]: see
// [ContentStream.Partial]. A function call the API gave no ID gets one
// made up, anew on each call of Message.
func (s *ContentStream) Message() (nous.Message, nous.Usage, error) {
	if !s.ended {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("gemini: the stream stopped after %d chunks, before a finish reason: %w", s.chunks, nous.ErrInterrupted)
	}
	return Message(s.response())
}

// Partial returns what the stream gave so far as a message a caller can
// add, marked with Metadata[nous.MetadataInterrupted] (and "model"), and
// the usage that arrived. The message holds the text so far (a part cut
// mid-way too), as [Message] places it (Content, or text parts when
// there are several, or thoughts), and the thoughts so far as plain
// nous.ThinkingPart(text, "") parts, which no adapter sends back: no
// thought signature, no function call (not even a whole one: the calls of
// a reply that stopped are not run, and a call without its result breaks
// the pairing), no image or file the model made (they may need their
// signatures), no part Message keeps whole (code the model ran, its
// result), no part of nothing but white space (the APIs take no blank
// text). With neither text nor thoughts, it is the zero nous.Message,
// nothing to add. The usage is that of the last chunk that had one
// (Requests 1 once a chunk came, ToolCalls 0), which the final usage is
// never less than.
func (s *ContentStream) Partial() (nous.Message, nous.Usage) {
	if s.chunks == 0 {
		return nous.Message{}, nous.Usage{}
	}
	var parts []nous.ContentPart
	texts := 0
	for i := range s.pieces {
		p := &s.pieces[i]
		switch {
		case p.whole != nil:
		case p.thought:
			if t := string(p.text); !adapt.Blank(t) {
				parts = append(parts, nous.ThinkingPart(t, ""))
			}
		case !adapt.Blank(string(p.text)):
			parts = append(parts, nous.TextPart(string(p.text)))
			texts++
		}
	}
	u := Usage(s.usage)
	if len(parts) == 0 {
		return nous.Message{}, u
	}
	m := nous.AssistantMessage("")
	if len(parts) == 1 && texts == 1 {
		m.Content = parts[0].Content
	} else {
		m.Parts = parts
	}
	m.Metadata = map[string]any{nous.MetadataInterrupted: true}
	if s.model != "" {
		m.Metadata["model"] = s.model
	}
	return m, u
}

// Stream is [Send] on a streamed reply: a copy of params filled from c by
// [Fill], sent through client.Models.GenerateContentStream, each chunk read
// by a [ContentStream] that gives its deltas to onDelta (which may be nil;
// c.EmitDelta routes them to c's Callbacks). A reply that ends has its
// usage and message added to c, as Send would, and the message is
// returned; an error once the finish reason came (a connection cut after
// the last chunk) is none. One that stops before its end (ctx cancelled,
// which Stream checks before each chunk, a cut connection, an error event
// of the API, chunks that end without a finish reason) has the usage that arrived
// added, and returns [ContentStream.Partial]'s message, which it does not
// add, with an error wrapping [nous.ErrInterrupted] and the cause. A view
// Fill refuses is its [*Error], and nothing is sent; an error before any
// chunk came changes nothing.
func Stream(ctx context.Context, client *genai.Client, params Params, c *nous.Context, onDelta func(nous.Delta)) (nous.Message, error) {
	if client == nil {
		return nous.Message{}, errors.New("gemini: Stream needs a client")
	}
	return adapt.Stream(ctx, c, nous.Step{Provider: Provider, Model: params.Model}, params, Fill, func(p Params) iter.Seq2[*genai.GenerateContentResponse, error] {
		return client.Models.GenerateContentStream(ctx, p.Model, p.Contents, p.Config)
	}, &ContentStream{OnDelta: onDelta})
}

// ContentStream reads the SDK's chunks as the shared streamed step does.
var _ adapt.Accumulator[*genai.GenerateContentResponse] = (*ContentStream)(nil)
