package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/adapt"
)

// ChatStream reads a streamed Chat Completions reply, chunk by chunk, as
// openai-go's stream gives them: a runtime that reads the stream itself
// passes each chunk to Add, then takes Message once the stream is over, or
// Partial when it stopped before its end. The zero value is ready to use;
// a ChatStream reads one reply and is not safe for concurrent use.
//
// It reads the first choice (index 0) and ignores the others. The reply
// ends at that choice's finish_reason; the usage arrives after it, in a
// last chunk without choices, only when the request asked for it
// (stream_options.include_usage, which [StreamChat] sets).
type ChatStream struct {
	// OnDelta, when set, is called with each piece of the reply that
	// carries text, a refusal's text (both [nous.DeltaText], Index 0: a
	// Chat reply has one text), or a tool call's name or arguments
	// ([nous.DeltaToolCall], Index the n-th call to open, from 0, which is
	// its position among the reply's calls when the calls open in the
	// order of their indexes, as the API sends them; for a custom tool's
	// call, Text is a piece of its input), in the order they came, from
	// Add.
	OnDelta func(nous.Delta)

	started  bool // a chunk came
	id       string
	model    string
	created  int64
	content  strings.Builder
	refusal  strings.Builder
	finish   string        // choice 0's finish_reason: the reply ended
	calls    []*chatCall   // in the order they opened
	open     map[int64]int // the call open at each index of the chunks
	usage    openai.CompletionUsage
	hasUsage bool
}

// chatCall is a tool call of a streamed Chat reply so far.
type chatCall struct {
	index         int64 // in the chunks
	id, typ, name string
	custom        bool // a custom tool's: args is its input
	args          strings.Builder
}

// Add reads the next chunk of the reply: its first choice's text,
// refusal, tool calls (grouped by their index: the ID, type and name from
// the chunks that carry them, the arguments in the order they came) and
// finish_reason, and the usage of the chunk that has it. A chunk never
// makes an error: Add returns nil.
func (s *ChatStream) Add(chunk openai.ChatCompletionChunk) error {
	s.started = true
	if s.id == "" {
		s.id = chunk.ID
	}
	if s.model == "" {
		s.model = chunk.Model
	}
	if s.created == 0 {
		s.created = chunk.Created
	}
	if chunk.JSON.Usage.Valid() {
		s.usage, s.hasUsage = chunk.Usage, true
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // a choice of n > 1: the message is the first's
		}
		d := &choice.Delta
		if d.Content != "" {
			s.content.WriteString(d.Content)
			s.emit(nous.Delta{Kind: nous.DeltaText, Text: d.Content})
		}
		if d.Refusal != "" {
			s.refusal.WriteString(d.Refusal)
			s.emit(nous.Delta{Kind: nous.DeltaText, Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			s.addCall(&tc)
		}
		if choice.FinishReason != "" {
			s.finish = choice.FinishReason
		}
	}
	return nil
}

// addCall reads a piece of a tool call. The first piece at an index (-1,
// which some servers send for a lone call, is 0, as the SDK reads it)
// opens a call, and so does a piece that brings an ID other than the open
// call's at its index: servers that speak the API (Ollama, vLLM) send
// every parallel call at index 0, each opening with its own ID. The ID
// and type are those first sent; the name and the arguments (a custom
// tool's input) grow with each piece.
func (s *ChatStream) addCall(tc *openai.ChatCompletionChunkChoiceDeltaToolCall) {
	index := max(tc.Index, 0)
	k, ok := s.open[index]
	if !ok || tc.ID != "" && s.calls[k].id != "" && tc.ID != s.calls[k].id {
		if s.open == nil {
			s.open = map[int64]int{}
		}
		k = len(s.calls)
		s.open[index] = k
		s.calls = append(s.calls, &chatCall{index: index})
	}
	call := s.calls[k]
	if call.id == "" {
		call.id = tc.ID
	}
	if call.typ == "" {
		call.typ = tc.Type
	}
	name, args := tc.Function.Name, tc.Function.Arguments
	if f, ok := tc.JSON.ExtraFields["custom"]; ok && f.Raw() != "" && f.Raw() != "null" { // a custom tool's call: the SDK's chunk has no field for it
		var custom struct{ Name, Input string }
		if json.Unmarshal([]byte(f.Raw()), &custom) == nil {
			name, args = custom.Name, custom.Input
		}
		call.custom = true
	}
	call.name += name
	call.args.WriteString(args)
	if args != "" || name != "" {
		s.emit(nous.Delta{Kind: nous.DeltaToolCall, Index: k, Text: args, ToolCallID: call.id, ToolName: call.name})
	}
}

func (s *ChatStream) emit(d nous.Delta) {
	if s.OnDelta != nil {
		s.OnDelta(d)
	}
}

// Message returns the reply and its usage as [ChatMessage] gives them for
// the same response not streamed: the chunks made into a
// [openai.ChatCompletion] (the first choice: its text, refusal, tool calls
// in the order of their indexes, finish_reason; the ID, model and usage)
// read by ChatMessage, with its errors. A stream without its choice's
// finish_reason has not ended: an error wrapping [nous.ErrInterrupted]. A
// stream that ended without the usage chunk (a request that did not ask
// for it, a server that ignores it, a body that ends right after the finish) has
// the usage of a request without its tokens: Requests 1, the tokens 0.
func (s *ChatStream) Message() (nous.Message, nous.Usage, error) {
	if s.finish == "" {
		return nous.Message{}, nous.Usage{}, fmt.Errorf("openai: the Chat Completions stream ended before its finish_reason: %w", nous.ErrInterrupted)
	}
	return ChatMessage(s.completion())
}

// completion returns the response the chunks so far make.
func (s *ChatStream) completion() *openai.ChatCompletion {
	msg := openai.ChatCompletionMessage{Content: s.content.String(), Refusal: s.refusal.String()}
	calls := slices.Clone(s.calls)
	slices.SortStableFunc(calls, func(a, b *chatCall) int { return cmp.Compare(a.index, b.index) })
	for _, call := range calls {
		tc := openai.ChatCompletionMessageToolCallUnion{ID: call.id, Type: call.typ}
		if call.custom {
			tc.Custom = openai.ChatCompletionMessageCustomToolCallCustom{Name: call.name, Input: call.args.String()}
		} else {
			tc.Function = openai.ChatCompletionMessageFunctionToolCallFunction{Name: call.name, Arguments: call.args.String()}
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	resp := &openai.ChatCompletion{ID: s.id, Model: s.model, Created: s.created,
		Choices: []openai.ChatCompletionChoice{{FinishReason: s.finish, Message: msg}}}
	if s.hasUsage {
		resp.Usage = s.usage
	}
	return resp
}

// Partial returns what the chunks so far hold that the caller can add to
// the context, and the usage that arrived, for a stream that stopped
// before its end (or after it: a cut usage chunk). The message is the
// text so far (a refusal's text, with Metadata["refusal"] true, when that
// is what came), marked [nous.MetadataInterrupted], with
// Metadata["model"]; it has no tool call, not even one whose arguments
// are whole, as a call of an unfinished reply is never run. Without text
// it is the zero Message, which there is no need to add. The usage is
// Requests 1 once a chunk came, with the tokens of the usage chunk if it
// came; no tool calls are counted.
func (s *ChatStream) Partial() (nous.Message, nous.Usage) {
	if !s.started {
		return nous.Message{}, nous.Usage{}
	}
	u := nous.Usage{Requests: 1}
	if s.hasUsage {
		u = ChatUsage(s.usage)
	}
	text, refusal := s.content.String(), false
	if text == "" && s.refusal.Len() > 0 {
		text, refusal = s.refusal.String(), true
	}
	if adapt.Blank(text) {
		return nous.Message{}, u
	}
	m := nous.AssistantMessage(text)
	m.Metadata = map[string]any{nous.MetadataInterrupted: true, "model": s.model}
	if refusal {
		m.Metadata["refusal"] = true
	}
	return m, u
}

// StreamChat is [SendChat] on a streamed reply: a copy of params filled
// from c by [FillChat], with StreamOptions.IncludeUsage set (the usage
// arrives only in the last chunk, which has no choice), streamed through
// client with opts, each chunk read by a [ChatStream] that gives onDelta
// (nil for none) the reply's deltas as they come.
//
// A stream that ends (its choice's finish_reason came) has its usage and
// message added to c, as SendChat would, and its message returned; when
// the body ends, or the connection is lost, before the usage chunk, that
// usage is Requests 1 without tokens. One that stops before (the context
// cancelled, the connection cut, an error of the API in the stream, the
// body ended before the finish_reason) has the usage that arrived added
// (Requests 1, no tokens: the usage chunk is the last) and returns the
// [ChatStream.Partial] message, which it does not add, with an error
// wrapping [nous.ErrInterrupted] and the cause; the caller adds it when it
// is not the zero Message. A view FillChat refuses, or an error before
// any chunk came (the API refused the request), changes nothing.
func StreamChat(ctx context.Context, client openai.Client, params openai.ChatCompletionNewParams, c *nous.Context, onDelta func(nous.Delta), opts ...option.RequestOption) (nous.Message, error) {
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	return adapt.Stream(ctx, c, nous.Step{Provider: Provider, Model: string(params.Model)}, params, FillChat, func(p openai.ChatCompletionNewParams) iter.Seq2[openai.ChatCompletionChunk, error] {
		return adapt.Seq(client.Chat.Completions.NewStreaming(ctx, p, opts...))
	}, &ChatStream{OnDelta: onDelta})
}

var _ adapt.Accumulator[openai.ChatCompletionChunk] = (*ChatStream)(nil)
