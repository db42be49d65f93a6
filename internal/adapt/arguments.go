package adapt

import (
	"bytes"
	"encoding/json"
)

// InvalidArgumentsKey is the key under which [Object] sends tool arguments
// that are not a JSON object, to an API that takes nothing else.
const InvalidArgumentsKey = "invalid_arguments"

// Object returns the arguments of a call as a JSON object, for an API that
// takes a call's input only as one: args itself when it is an object; {}
// when it is empty or null; anything else (bytes that are not JSON, as a
// model that stopped halfway sends, or an array, a string, a number) as
// {"invalid_arguments": the text of args, as a JSON string}, so that the
// model sees what it sent. The log keeps args as they came.
func Object(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return json.RawMessage("{}")
	case trimmed[0] == '{' && json.Valid(trimmed):
		return args
	}
	out, _ := json.Marshal(map[string]string{InvalidArgumentsKey: string(args)}) // a map of strings always encodes
	return out
}

// UnnamedTool is the name an adapter sends for a call that has none (a
// server that left it out, a stream cut before it came): the APIs refuse a
// call without a name, and the model sees the error result its runtime
// gave such a call. The log keeps the call as it came.
const UnnamedTool = "unnamed_tool"

// Name returns the name to send for a call named name.
func Name(name string) string {
	if name == "" {
		return UnnamedTool
	}
	return name
}
