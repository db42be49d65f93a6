package nous

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error a [Context], a [ContextUpdate], [Fold] or
// [Deserialize] returns wraps one of these with the detail of what was wrong
// (which field, which key, which index), so callers match with [errors.Is]
// and people read the message. The UnmarshalJSON methods of the value types
// return encoding/json's errors, as json.Unmarshal callers expect.
var (
	// ErrInvalidMessage reports a message that breaks a rule of
	// [Message.Validate]. AddMessage, AddMessages, ReplaceMessage,
	// ReplaceMessageRange and Deserialize return it.
	ErrInvalidMessage = errors.New("invalid message")

	// ErrOutOfRange reports an index or range outside the message view.
	ErrOutOfRange = errors.New("out of range")

	// ErrSurfaceEvent reports an attempt to log a surface event type through
	// [Context.LogEvent]; surface events come only from adding or replacing
	// messages, so that the view and the log never disagree.
	ErrSurfaceEvent = errors.New("surface event type cannot be logged directly")

	// ErrUnknownEventType reports an event type the package does not know.
	ErrUnknownEventType = errors.New("unknown event type")

	// ErrTypeMismatch reports a ContextUpdate operation that does not fit the
	// value already at its key, such as an append onto a value that is not a
	// list.
	ErrTypeMismatch = errors.New("type mismatch")

	// ErrInvalidLog reports a sequence of events that does not fold: a seq
	// that is not 1, 2, 3, ..., a surface event without its message, or a
	// replacement whose anchors are not in the view.
	ErrInvalidLog = errors.New("invalid event log")

	// ErrMissingVersion reports serialized data without an integer "version".
	ErrMissingVersion = errors.New("missing or invalid version field")

	// ErrUnsupportedVersion reports serialized data of a version this package
	// cannot read; the error names the version.
	ErrUnsupportedVersion = errors.New("unsupported version")

	// ErrInvalidArguments reports tool-call arguments that are not a JSON
	// object of the shape asked for; see [ToolCall.ParseArguments].
	ErrInvalidArguments = errors.New("invalid tool-call arguments")

	// ErrInvalidName reports a log name or labels a store cannot keep
	// (see [WithLogName] and [WithLogLabels]): Save stores nothing.
	ErrInvalidName = errors.New("invalid log name or labels")

	// ErrUnpaired reports a view whose tool calls and results do not pair
	// as providers require; see [Context.CheckToolPairing]. ReplaceMessage
	// and ReplaceMessageRange return it for a replacement that would break
	// the pairing.
	ErrUnpaired = errors.New("unpaired tool call")

	// ErrConflict reports a save or a refresh that cannot be done because
	// another writer saved the log since the context last saw it (see
	// [Context.Save]), and a compaction plan that no longer matches the
	// view it was made from (see [Context.ApplyCompaction]).
	ErrConflict = errors.New("conflict: the log moved on")

	// ErrLanded reports a batch whose key ([Context.SetBatchKey]) the log
	// holds already: that turn is stored, by this context or by another
	// one given the same key. It wraps ErrConflict, as a save that stores
	// nothing because of another writer's.
	ErrLanded = fmt.Errorf("batch already stored (%w)", ErrConflict)

	// ErrInvalidTool reports a tool definition a provider cannot take, or
	// a Go type [SchemaOf] has no JSON Schema for; see [Tool.Validate].
	ErrInvalidTool = errors.New("invalid tool definition")

	// ErrInvalidKey reports a batch key a store cannot keep ([CheckKey]):
	// Save stores nothing.
	ErrInvalidKey = errors.New("invalid batch key")

	// ErrOverBudget reports a view that cannot be brought within a token
	// budget: what must be kept (the leading system messages, the active
	// turn, the summary) alone exceeds it; see [Context.PlanCompaction].
	ErrOverBudget = errors.New("over the token budget")

	// ErrNotFound reports a log a [Store] does not hold.
	ErrNotFound = errors.New("log not found")

	// ErrInterrupted reports a model's reply whose stream stopped before
	// its end: cancelled, cut, or ended by an error event. The provider
	// adapters' Stream functions return it, wrapping the cause, with the
	// partial reply (see [MetadataInterrupted]) for the caller to add.
	ErrInterrupted = errors.New("reply interrupted")

	// ErrCorrupt reports stored data that fails its checks: a checksum, a
	// length, the order of seqs, a version, JSON that does not decode.
	ErrCorrupt = errors.New("corrupt stored data")

	// ErrToolCallsEdited reports a Context.ToolCalls that no longer starts
	// with the calls the log records: an element was removed, replaced or
	// changed. Save, Refresh and Serialize return it and change nothing;
	// see [Context.AddToolCall] for the way out.
	ErrToolCallsEdited = errors.New("tool calls edited: they are a record of the log")

	// ErrMalformed reports serialized data that is not valid JSON of the
	// expected shape; the error names the place.
	ErrMalformed = errors.New("malformed serialized context")
)
