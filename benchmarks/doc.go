// Package benchmarks runs the same agent conversation in nous, in Google
// ADK-Go's in-memory session service and in a naive context that
// re-materializes its message list on every add, so that their costs per
// turn can be compared side by side.
//
// It is a module of its own, so the dependencies of the comparison (ADK-Go,
// genai and theirs) never enter the nous module. The conversation and its
// five implementations (nous walking with All or copying with Messages, ADK
// copying or not, naive) are in conversation.go; the benchmark that runs them
// is BenchmarkConversation. BENCHMARKS.md at the repository root has the
// results and how to reproduce them.
//
// Each turn of the conversation is what a runner does for one tool-using
// step of an agent:
//
//  1. add the user's message;
//  2. walk the full history, as a runner does to build the model request;
//  3. add the assistant's message, which carries one tool call;
//  4. apply the tool's state change: set one key and append to a list;
//  5. add the tool's result.
package benchmarks
