package nous

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nous-go/nous/internal/jsonx"
)

// EventType names what an [Event] records.
//
// Surface types project into the message view: the four message types add a
// message, and [EventReplace] substitutes one message for a range of the
// view. Bookkeeping types record what happened during a run (turns, steps,
// tool calls, request headers) and project to no message.
type EventType string

// The event types. A log holds no other.
const (
	// surface: they project into the message view
	EventUserMessage      EventType = "user_message"
	EventAssistantMessage EventType = "assistant_message"
	EventSystemMessage    EventType = "system_message"
	EventToolResult       EventType = "tool_result"
	EventReplace          EventType = "replace"
	// bookkeeping: they project to no message
	EventTurnStart     EventType = "turn_start"
	EventTurnEnd       EventType = "turn_end"
	EventStepStart     EventType = "step_start"
	EventStepEnd       EventType = "step_end"
	EventToolCall      EventType = "tool_call"
	EventRequestHeader EventType = "request_header"
	// EventDepsUpdate records a change of the deps: the operations of an
	// applied [ContextUpdate], or, at a save, what was changed in
	// Context.Deps directly, as sets and deletes. Its Data holds them under
	// [DataOps]; the deps as of any seq are the fold of these events
	// ([SessionLog.Deps]).
	EventDepsUpdate EventType = "deps_update"
	// EventBatch ends every batch a save stores: its Data holds, under
	// [DataKeys], the batch's key ([Context.SetBatchKey], or a random one
	// Save makes), so that a batch that landed when its save's reply was
	// lost is found in the log itself. Only Save appends one; a log
	// migrated from a store that kept the keys apart may hold one listing
	// many.
	EventBatch EventType = "batch"
	// EventToolStart records that a tool call is about to run: its Data
	// holds the call's ID under [DataCallID] and the attempt, from 1,
	// under [DataAttempt]. A runner logs it, and saves, before the tool
	// runs ([Context.StartToolCall]): a call started without a result is
	// in doubt ([Pending]).
	EventToolStart EventType = "tool_start"
	// EventApprovalRequest records that a tool call waits for a decision
	// before it runs ([Context.RequestApproval]): its Data holds the
	// call's ID under [DataCallID] and the digest of its name and
	// arguments under [DataDigest].
	EventApprovalRequest EventType = "approval_request"
	// EventApprovalDecision records the decision on a call that waits
	// ([Context.Decide]): its Data holds [DataCallID], [DataDigest] and
	// [DataRequest] of the request it answers, [DataDecision] ("approve"
	// or "reject"), and, when set, [DataArguments] (the arguments the call
	// runs with instead), [DataReason] and [DataBy].
	EventApprovalDecision EventType = "approval_decision"
	// EventRuntime is an event of the runtime that drives the session,
	// kept as its data holds it (an ADK event, say): nous reads nothing of
	// it, and a store keeps it as it keeps every event.
	EventRuntime EventType = "runtime_event"
)

// IsSurface reports whether events of type t change the message view.
func (t EventType) IsSurface() bool {
	switch t {
	case EventUserMessage, EventAssistantMessage, EventSystemMessage, EventToolResult, EventReplace:
		return true
	}
	return false
}

// IsBookkeeping reports whether t is a known type that projects to no
// message. An unknown type is neither surface nor bookkeeping.
func (t EventType) IsBookkeeping() bool {
	switch t {
	case EventTurnStart, EventTurnEnd, EventStepStart, EventStepEnd, EventToolCall, EventRequestHeader, EventRuntime, EventDepsUpdate, EventBatch,
		EventToolStart, EventApprovalRequest, EventApprovalDecision:
		return true
	}
	return false
}

// messageEventType returns the surface event type that adds a message of
// role r.
func messageEventType(r Role) EventType {
	switch r {
	case RoleUser:
		return EventUserMessage
	case RoleAssistant:
		return EventAssistantMessage
	case RoleSystem:
		return EventSystemMessage
	case RoleTool:
		return EventToolResult
	}
	return ""
}

// Event is one entry of a [SessionLog].
//
// An event is identified by the ID of its log and its Seq; it has no ID of
// its own. Its JSON encoding (its struct tags, and UnmarshalJSON for the
// number rule) is the one encoding of an event, used by the serialized
// context and by stores. To persist an event, write it with
// [Context.AppendEventJSON], which drops secrets and values JSON cannot hold
// as [Context.Serialize] does; json.Marshal writes whatever the event holds
// and fails on a value such as a function.
type Event struct {
	Seq       int64          `json:"seq"`              // 1, 2, 3, ... in append order, unique in a log
	Type      EventType      `json:"type"`             // what the event records
	Data      map[string]any `json:"data,omitzero"`    // bookkeeping payload; "source" for injected messages
	Message   *Message       `json:"message,omitzero"` // surface events: the message they add or substitute
	CreatedAt time.Time      `json:"created_at"`       // when the event was appended

	// First and Last name the range a replace event shadows: the seqs of
	// the events that produced the first and the last shadowed entries of
	// the view. Both are 0 for every other type.
	First int64 `json:"first,omitzero"` // replace events: the first shadowed entry's seq
	Last  int64 `json:"last,omitzero"`  // replace events: the last shadowed entry's seq

	// After, on a message event, puts its message right after the entry of
	// the view produced by the event with that seq, instead of at the end.
	// [Context.PatchDanglingToolCalls] inserts a call's missing result this
	// way, next to the call. 0 for every other event.
	After int64 `json:"after,omitzero"`

	// Call, on a tool_call event, is the call [Context.AddToolCall]
	// recorded: Context.ToolCalls is the fold of these, in seq order. A
	// tool_call event logged with [Context.LogEvent] has none. Nil for
	// every other type.
	Call *ToolCall `json:"call,omitzero"`
}

// UnmarshalJSON decodes an event; whole numbers in Data decode as int. It
// does not check the event: folding does.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w eventJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return w.decode(e)
}

// eventJSON is an [Event] as it is read from JSON, before its Data is decoded
// by the number rule. Event.UnmarshalJSON decodes through it; a decoder of
// many events (Deserialize) decodes into it directly, which spares the JSON
// decoder a pass over each event.
type eventJSON struct {
	plainEvent
	Data    json.RawMessage `json:"data"`    // shadows plainEvent.Data
	Message *messageJSON    `json:"message"` // shadows plainEvent.Message
}

type plainEvent Event // same fields, no methods

// decode sets *e to the event w holds.
func (w *eventJSON) decode(e *Event) error {
	data, err := jsonx.DecodeMap(w.Data)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	*e = Event(w.plainEvent)
	e.Data = data
	if w.Message != nil {
		e.Message = new(Message)
		if err := w.Message.decode(e.Message); err != nil {
			return fmt.Errorf("message: %w", err)
		}
	}
	return nil
}

// check reports whether e is a well-formed event of its type, on its own;
// whether a replace event's anchors are in the view is for the fold to say.
func (e *Event) check() error {
	switch {
	case e.Type.IsBookkeeping():
		if e.Message != nil {
			return fmt.Errorf("%s event carries a message: %w", e.Type, ErrInvalidLog)
		}
		if e.First != 0 || e.Last != 0 || e.After != 0 {
			return fmt.Errorf("%s event carries a place in the view: %w", e.Type, ErrInvalidLog)
		}
		if e.Call != nil && e.Type != EventToolCall {
			return fmt.Errorf("%s event carries a tool call (only tool_call events record one): %w", e.Type, ErrInvalidLog)
		}
		if _, err := batchKeys(e.Type, e.Data); err != nil {
			return err
		}
		return checkTurnEvent(e.Type, e.Data)
	case !e.Type.IsSurface():
		return fmt.Errorf("event type %q: %w", e.Type, ErrUnknownEventType)
	}
	if e.Message == nil {
		return fmt.Errorf("%s event without a message: %w", e.Type, ErrInvalidLog)
	}
	if e.Call != nil {
		return fmt.Errorf("%s event carries a tool call (only tool_call events record one): %w", e.Type, ErrInvalidLog)
	}
	if err := e.Message.validate(); err != nil {
		return err
	}
	if e.Type == EventReplace {
		// The view orders entries by position, not seq: First may exceed Last.
		if e.First < 1 || e.Last < 1 || e.First >= e.Seq || e.Last >= e.Seq || e.After != 0 {
			return fmt.Errorf("replace anchors %d..%d (after %d) are not earlier events than seq %d: %w", e.First, e.Last, e.After, e.Seq, ErrInvalidLog)
		}
		return nil
	}
	if e.First != 0 || e.Last != 0 {
		return fmt.Errorf("%s event carries a replace range: %w", e.Type, ErrInvalidLog)
	}
	if e.After < 0 || e.After >= e.Seq {
		return fmt.Errorf("%s event after %d is not after an earlier event than seq %d: %w", e.Type, e.After, e.Seq, ErrInvalidLog)
	}
	if want := messageEventType(e.Message.Role); e.Type != want {
		return fmt.Errorf("%s event carries a %s message: %w", e.Type, e.Message.Role, ErrInvalidLog)
	}
	return nil
}

// The Data keys of the events the context logs itself but the step_end's
// ([DataUsage]).
const (
	// DataSource is the key under which [WithSource] records where an
	// injected message came from.
	DataSource = "source"
	// DataOps is the key of a deps_update event's operations
	// ([EventDepsUpdate]): a list, each an object with "op" (set, merge,
	// append or delete), "key" and, but for delete, "value".
	DataOps = "ops"
	// DataKeys is the key of a batch event's keys ([EventBatch]): a list
	// of strings, each a key [CheckKey] accepts, none empty.
	DataKeys = "keys"
)

// The Data keys of the events that record a turn's tool calls: their
// starts ([EventToolStart]), the approvals they wait for
// ([EventApprovalRequest], [EventApprovalDecision]), and the times a
// tool_result event records of the call it answers.
const (
	DataCallID    = "call_id"    // string: the ID of the call
	DataAttempt   = "attempt"    // int: the call's start, from 1
	DataOwner     = "owner"      // string: the runner that started the call
	DataUntil     = "until"      // string, RFC 3339 with nanoseconds: until when the call is taken as running there
	DataDigest    = "digest"     // string: the call's [CallDigest]
	DataRequest   = "request"    // int: the seq of the approval_request a decision answers
	DataDecision  = "decision"   // string: "approve" or "reject"
	DataArguments = "arguments"  // string: the arguments an approval runs the call with instead
	DataReason    = "reason"     // string: why, as the decider said
	DataBy        = "by"         // string: who decided, as the decider said
	DataStartedAt = "started_at" // string, RFC 3339 with nanoseconds: when the tool started
	DataEndedAt   = "ended_at"   // string, RFC 3339 with nanoseconds: when it returned
)

// The decisions an [EventApprovalDecision] records.
const (
	decisionApprove = "approve"
	decisionReject  = "reject"
)

// checkTurnEvent reports whether data is the data of an event of type t
// that records a turn's tool calls: a tool_start's call ID and attempt, an
// approval request's call ID and digest, a decision's call ID, digest,
// request and decision, its arguments JSON; nil for any other type. A
// malformed one is an error wrapping [ErrInvalidLog].
func checkTurnEvent(t EventType, data map[string]any) error {
	if t != EventToolStart && t != EventApprovalRequest && t != EventApprovalDecision {
		return nil
	}
	id, _ := data[DataCallID].(string)
	digest, _ := data[DataDigest].(string)
	attempt, _ := data[DataAttempt].(int)
	request, _ := data[DataRequest].(int)
	args, hasArgs := data[DataArguments]
	argsJSON, _ := args.(string)
	switch {
	case id == "":
		return fmt.Errorf("%s event without a %q: %w", t, DataCallID, ErrInvalidLog)
	case t == EventToolStart && attempt < 1:
		return fmt.Errorf("%s event of call %.40q: attempt %v, want 1 or more: %w", t, id, data[DataAttempt], ErrInvalidLog)
	case t == EventToolStart && !validTime(data[DataUntil]):
		return fmt.Errorf("%s event of call %.40q: until %v, want a time: %w", t, id, data[DataUntil], ErrInvalidLog)
	case t == EventToolStart:
		return nil
	case digest == "":
		return fmt.Errorf("%s event of call %.40q without a %q: %w", t, id, DataDigest, ErrInvalidLog)
	case t == EventApprovalRequest:
		return nil
	case request < 1:
		return fmt.Errorf("%s event of call %.40q: request %v, want the seq of a request: %w", t, id, data[DataRequest], ErrInvalidLog)
	case data[DataDecision] != decisionApprove && data[DataDecision] != decisionReject:
		return fmt.Errorf("%s event of call %.40q: decision %v, want %q or %q: %w", t, id, data[DataDecision], decisionApprove, decisionReject, ErrInvalidLog)
	case hasArgs && !json.Valid([]byte(argsJSON)):
		return fmt.Errorf("%s event of call %.40q: arguments that are not JSON: %w", t, id, ErrInvalidLog)
	}
	return nil
}

// validTime reports whether v is absent (nil) or a time as RFC 3339 with
// nanoseconds writes it.
func validTime(v any) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	_, err := time.Parse(time.RFC3339Nano, s)
	return ok && err == nil
}

// batchKeys returns the keys an event of type t with data data names: a
// batch event's ([EventBatch]), nil for any other type. A batch event
// without a list of keys is an error wrapping [ErrInvalidLog].
func batchKeys(t EventType, data map[string]any) ([]string, error) {
	if t != EventBatch {
		return nil, nil
	}
	list, ok := data[DataKeys].([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("batch event without a list of %q: %w", DataKeys, ErrInvalidLog)
	}
	keys := make([]string, len(list))
	for i, v := range list {
		k, ok := v.(string)
		if !ok || k == "" || CheckKey(k) != nil {
			return nil, fmt.Errorf("batch event: %s[%d] is not a batch key: %w", DataKeys, i, ErrInvalidLog)
		}
		keys[i] = k
	}
	return keys, nil
}
