package nous

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/nous-go/nous/internal/jsonx"
)

// SandboxMode says what a tool may touch.
type SandboxMode string

// The sandbox modes, from the most to the least restrictive.
const (
	SandboxReadOnly       SandboxMode = "read_only"
	SandboxWorkspaceWrite SandboxMode = "workspace_write"
	SandboxFullAccess     SandboxMode = "full_access"
)

// Valid reports whether m is one of the three modes.
func (m SandboxMode) Valid() bool {
	switch m {
	case SandboxReadOnly, SandboxWorkspaceWrite, SandboxFullAccess:
		return true
	}
	return false
}

// UnmarshalText reads a mode, refusing an unknown one.
func (m *SandboxMode) UnmarshalText(b []byte) error {
	v := SandboxMode(b)
	if !v.Valid() {
		return fmt.Errorf("nous: sandbox mode %q is not read_only, workspace_write or full_access", b)
	}
	*m = v
	return nil
}

// SandboxPolicy is the session's sandbox override, carried to tools on the
// [RunContext]. The zero value has no mode; [NewSandboxPolicy] makes one.
type SandboxPolicy struct {
	Mode SandboxMode `json:"mode"` // what a tool may touch
	// WritableRoots lists the directories a tool may write under in
	// SandboxWorkspaceWrite mode.
	WritableRoots []string `json:"writable_roots,omitzero"`
	// Network says whether a tool may use the network.
	Network bool `json:"network,omitzero"`
}

// NewSandboxPolicy returns a policy of the given mode.
func NewSandboxPolicy(mode SandboxMode) SandboxPolicy { return SandboxPolicy{Mode: mode} }

// RunContext is the snapshot a tool receives: the deps, the retry count, the
// usage so far and the sandbox policy. It is a plain value; its Deps map is the
// tool's own copy. A tool changes the context by returning a [ContextUpdate],
// not by writing here.
type RunContext struct {
	// Deps are the tool's own deep copy of the context's deps.
	Deps map[string]any
	// Retry is the number of times the tool call has been retried.
	Retry int
	// Usage is what the run consumed so far.
	Usage Usage
	// Sandbox is the session's sandbox override; nil: the application's
	// default applies.
	Sandbox *SandboxPolicy
	// Logger receives the package's warnings about this run context, such
	// as log events [ContextUpdate.ApplyToRunContext] drops; nil means
	// slog.Default(). [Context.ToRunContext] sets the context's.
	Logger *slog.Logger
	// Call is the tool call the run context serves, set by
	// [Context.RunToolCalls]; zero otherwise.
	Call ToolCall
}

func (rc RunContext) logger() *slog.Logger {
	if rc.Logger != nil {
		return rc.Logger
	}
	return slog.Default()
}

// RunContextOption configures a [RunContext] made by [NewRunContext] or
// [Context.ToRunContext].
type RunContextOption func(*RunContext)

// NewRunContext returns a run context holding a deep copy of deps (an empty
// map when deps is nil), changed by opts. Every map and slice in deps is
// copied, typed ones such as a []string included, so the run context may be
// read on another goroutine while the deps it came from change.
func NewRunContext(deps map[string]any, opts ...RunContextOption) RunContext {
	return newRunContext(deps, Usage{}, nil, opts)
}

func newRunContext(deps map[string]any, usage Usage, logger *slog.Logger, opts []RunContextOption) RunContext {
	rc := RunContext{Deps: jsonx.CloneMap(deps), Usage: usage, Logger: logger}
	if rc.Deps == nil {
		rc.Deps = map[string]any{}
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&rc)
		}
	}
	return rc
}

// WithRetry sets the number of times the tool call has been retried.
func WithRetry(n int) RunContextOption { return func(rc *RunContext) { rc.Retry = n } }

// WithRunUsage sets the usage so far.
func WithRunUsage(u Usage) RunContextOption { return func(rc *RunContext) { rc.Usage = u } }

// WithRunLogger sets the logger that receives the warnings about the run
// context.
func WithRunLogger(l *slog.Logger) RunContextOption {
	return func(rc *RunContext) { rc.Logger = l }
}

// WithSandbox sets the sandbox policy. The policy is copied.
func WithSandbox(p SandboxPolicy) RunContextOption {
	p.WritableRoots = slices.Clone(p.WritableRoots)
	return func(rc *RunContext) {
		q := p // each run context its own policy: the option may be reused
		q.WritableRoots = slices.Clone(p.WritableRoots)
		rc.Sandbox = &q
	}
}
