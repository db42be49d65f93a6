// Package nousotel makes OpenTelemetry traces of nous sessions, from the
// session log: live, as a run appends its events ([Tracer.Observe]), or
// after the fact, from a context or a stored session ([Tracer.Export]),
// with the events' own times. Both are one fold of the same events, so a
// session traced live and the same session exported tomorrow give the
// same spans.
//
// # Conventions
//
// The spans follow the OpenTelemetry semantic conventions for generative
// AI of version 1.41.0 (go.opentelemetry.io/otel/semconv/v1.41.0), whose
// schema URL the tracer's instrumentation scope carries. Those
// conventions are in development; an instrumentation that emitted an
// older version keeps it unless OTEL_SEMCONV_STABILITY_OPT_IN names
// gen_ai_latest_experimental. This package has emitted no older version:
// it emits the latest, as if that opt-in were set, whatever the
// variable says.
//
//   - invoke_agent (internal), one per turn: gen_ai.operation.name,
//     gen_ai.conversation.id (the log's ID), gen_ai.agent.name
//     ([WithAgentName]), and the sum of its model calls' gen_ai.usage.*.
//     A turn is what a turn_start and its turn_end bound when the log has
//     them; otherwise it starts at a user message and ends when a reply
//     that asks for no tool has ended its step.
//   - chat (client), one per model call, a child of its turn:
//     gen_ai.provider.name and gen_ai.request.model (from the step_end
//     that [nous.Context.EndStep] logs: every provider adapter's Send and
//     Stream log one), gen_ai.response.model and
//     gen_ai.response.finish_reasons (from the reply's metadata),
//     gen_ai.usage.input_tokens, output_tokens, cache_read.input_tokens,
//     cache_creation.input_tokens and reasoning.output_tokens. It runs
//     from the event before the reply (or a step_start) to its step_end.
//     A partial reply added right after its call's failed step (a stream
//     cut short) is that call's. A compaction's summary made by a model (a step_end
//     right after the replace event that put the summary in place, as
//     [nous.Context.Compact] logs a UsageSummarizer's call) is a chat span
//     of its turn, from the event before the replace, with the summary as
//     its output.
//   - execute_tool (internal), one per tool result, a child of its turn:
//     gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type. It runs
//     from the end of the step that asked for the call to its result;
//     calls of one ID are answered in the order they were asked for.
//
// Every span has the times of the events that bound it, except that none
// ends before it starts, nor a turn before its calls' spans or the turn
// before it: a log whose clock went back still gives a trace a backend
// takes. The batch event a save ends each of its batches with
// ([nous.EventBatch]) is no event of the run: it makes no span, ends
// none, and moves no span's time.
//
// An error is the span's status (Error, with error.type _OTHER): a
// model call that gave no reply or a partial one (its step's error says
// why), a tool's error result, and a turn whose last model call failed.
// A request the API refused changes nothing in the log, so it is in no
// span; an HTTP client's instrumentation traces those.
//
// # Content
//
// Spans carry no message content unless the tracer is made
// [WithContent]. Then a chat span has gen_ai.system_instructions (the
// context's system prompt), gen_ai.input.messages and
// gen_ai.output.messages, and an execute_tool span
// gen_ai.tool.call.arguments and gen_ai.tool.call.result, each a JSON
// string in the conventions' schema. A chat span's input messages are
// the ones the view gained since the model's previous reply (the user's
// message, the tool results, a compaction's summary): with the chat
// spans before it, that is the history, and a trace grows with the
// session, not with its square.
//
// Content is redacted by the context's own rule ([nous.Context.Redact],
// or [WithRedaction] for a stored session, whose rule no store keeps, or
// [nous.IsSecretKey]): in a JSON object (a call's arguments, a tool's
// result), the value of each key the rule names is [Redacted], at any
// depth, and in text that is not JSON (arguments cut short) the value
// after such a key; and every string the deps hold under such a key (of
// a map, or a struct's field by its JSON or Go name), of 4 bytes or
// more, is [Redacted] wherever it appears in content, as a value or a
// key, a tool's echo of a key included. The deps are read again at each
// span, so a secret a tool's update sets is masked in its own result.
// An error's text is masked alike in a span's status, with content or
// without. Names, IDs, models, counts and times are not content.
//
// # Cost
//
// A context with no Observer pays nothing, and a tracer of the no-op
// provider observes nothing. Observed, each event costs a few
// comparisons, and each span one Start and End of the tracer. A turn the
// tracer does not record (a sampler dropped it) makes no span of its
// calls, and a span that is not recorded gets no attribute past the ones
// a sampler reads.
package nousotel
