package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// frame returns the Server-Sent Event of data, named event when not "".
func frame(event string, data any) string {
	b, _ := json.Marshal(data) // maps of plain values always encode
	if event == "" {
		return "data: " + string(b) + "\n\n"
	}
	return "event: " + event + "\ndata: " + string(b) + "\n\n"
}

// words splits text into the pieces a model streams: each word with the
// spaces after it.
func words(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			return append(out, text)
		}
		for i < len(text) && text[i] == ' ' {
			i++
		}
		out, text = append(out, text[:i]), text[i:]
	}
	return out
}

// chatFrames returns the Chat Completions chunks of r, the n-th reply: its
// text word by word, each tool call's name then its arguments, the
// finish_reason, the usage chunk, and [DONE].
func chatFrames(n int, r *Reply) []string {
	head := func(choices []any) map[string]any {
		return map[string]any{"id": fmt.Sprint("chatcmpl-", n+1), "object": "chat.completion.chunk", "created": n + 1, "model": "scripted",
			"choices": choices, "usage": nil}
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}
	frames := []string{frame("", head(choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)))}
	for _, w := range words(r.Text) {
		frames = append(frames, frame("", head(choice(map[string]any{"content": w}, nil))))
	}
	for i, tc := range r.ToolCalls {
		frames = append(frames,
			frame("", head(choice(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil))),
			frame("", head(choice(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": string(tc.Arguments)}}}}, nil))))
	}
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	frames = append(frames, frame("", head(choice(map[string]any{}, finish))))
	last := head([]any{})
	var body struct{ Usage any }
	_ = json.Unmarshal([]byte(chatBody(n, r)), &body) // chatBody's JSON
	last["usage"] = body.Usage
	return append(frames, frame("", last), "data: [DONE]\n\n")
}

// responsesFrames returns the Responses API events of the response body:
// response.created, each output item added, its text, summary or
// arguments as deltas, and done, then response.completed with the body.
func responsesFrames(body string) []string {
	var resp map[string]any
	_ = json.Unmarshal([]byte(body), &resp) // responsesBody's JSON
	seq := 0
	var frames []string
	ev := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		frames = append(frames, frame(typ, fields))
	}
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"], created["output"], created["usage"] = "in_progress", []any{}, nil
	ev("response.created", map[string]any{"response": created})
	output, _ := resp["output"].([]any)
	for i, o := range output {
		item, _ := o.(map[string]any)
		id, _ := item["id"].(string)
		ev("response.output_item.added", map[string]any{"output_index": i, "item": opened(item)})
		switch item["type"] {
		case "message":
			text := item["content"].([]any)[0].(map[string]any)["text"].(string)
			for _, w := range words(text) {
				ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": w, "logprobs": []any{}})
			}
			ev("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}})
		case "reasoning":
			text := item["summary"].([]any)[0].(map[string]any)["text"].(string)
			for _, w := range words(text) {
				ev("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "delta": w})
			}
			ev("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "text": text})
		case "function_call":
			ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": item["arguments"]})
			ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": item["arguments"]})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	ev("response.completed", map[string]any{"response": resp})
	return frames
}

// opened returns an output item as its added event has it: in progress,
// without its text, summary or arguments.
func opened(item map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range item {
		out[k] = v
	}
	switch item["type"] {
	case "message":
		out["status"], out["content"] = "in_progress", []any{}
	case "reasoning":
		out["summary"] = []any{}
		delete(out, "encrypted_content")
	case "function_call":
		out["status"], out["arguments"] = "in_progress", ""
	}
	return out
}
