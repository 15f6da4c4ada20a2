package agent

import (
	"encoding/json"
	"time"
)

// Event is one typed event read from a session's CLI. The concrete types
// below are the whole set; consumers switch on them. Unknown CLI output is
// reported as Unknown, never dropped silently and never fatal.
type Event interface{ isEvent() }

// Init is the CLI's system/init line, re-sent at the start of every turn.
type Init struct {
	SessionID      string
	Model          string
	PermissionMode string
	Tools          []string
}

// TextDelta is a streamed piece of assistant text (stream_event
// content_block_delta text_delta). ParentToolUseID is set for subagent output.
type TextDelta struct {
	Text            string
	ParentToolUseID string
}

// ThinkingDelta is a streamed piece of extended thinking.
type ThinkingDelta struct{ Text string }

// AssistantText is a complete assistant text block (from an `assistant` line).
// With partial messages on, the same text was already seen as TextDeltas.
type AssistantText struct {
	MessageID       string
	Text            string
	ParentToolUseID string
}

// ToolUse is a tool call made by the model (from an `assistant` line).
type ToolUse struct {
	ID              string
	Name            string
	Input           json.RawMessage
	ParentToolUseID string
}

// ToolResult is the outcome of a tool call (from a `user` line's tool_result
// block). Content is the result flattened to text.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	Content   string
}

// PermissionRequest is a control_request can_use_tool: the CLI waits until the
// host answers it with Session.Respond (or cancels it with a
// PermissionCancelled event).
type PermissionRequest struct {
	RequestID               string
	ToolName                string
	DisplayName             string
	Input                   json.RawMessage
	Description             string
	BlockedPath             string
	DecisionReason          string
	Suggestions             []json.RawMessage // permission_suggestions, verbatim
	ToolUseID               string
	AgentID                 string // set when a subagent asks
	RequiresUserInteraction bool   // AskUserQuestion, ExitPlanMode
}

// PermissionCancelled reports a control_cancel_request: the permission request
// with RequestID is void; a later answer to it is ignored by the CLI.
type PermissionCancelled struct{ RequestID string }

// Lifecycle is a command_lifecycle receipt for the user message whose uuid is
// UUID. State is one of LifecycleQueued, LifecycleStarted, LifecycleCompleted,
// LifecycleCancelled.
type Lifecycle struct {
	UUID  string
	State string
}

// Lifecycle states as sent by the CLI.
const (
	LifecycleQueued    = "queued"
	LifecycleStarted   = "started"
	LifecycleCompleted = "completed"
	LifecycleCancelled = "cancelled"
)

// TaskStarted reports system/task_started (background Bash, subagents).
type TaskStarted struct {
	TaskID      string
	TaskType    string
	Description string
	ToolUseID   string
}

// TaskNotification reports system/task_notification: a background task
// finished, failed or was stopped.
type TaskNotification struct {
	TaskID     string
	Status     string
	Summary    string
	OutputFile string
	ToolUseID  string
}

// StatusChange reports system/status (e.g. a permission mode change).
type StatusChange struct {
	Status         string
	PermissionMode string
}

// Usage is the token usage of a result.
type Usage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheCreationInputTokens int64
	CacheReadInputTokens     int64
}

// Result ends a turn. There may be several per process; turns started by the
// CLI itself (background task notifications) have a non-empty Origin.
// Failure is judged by IsError, never by Subtype.
type Result struct {
	Subtype        string
	IsError        bool
	Text           string
	Errors         []string
	SessionID      string
	NumTurns       int
	Duration       time.Duration
	CostUSD        float64
	Usage          Usage
	StopReason     string
	TerminalReason string
	Origin         string // origin.kind, e.g. "task-notification"; "" for host-started turns
	UUID           string
}

// DecodeError reports a stdout line that could not be decoded (not JSON, or
// longer than the line cap). The stream goes on after it.
type DecodeError struct {
	Line []byte // at most the first 256 bytes
	Err  error
}

// Unknown is a well-formed line of a kind this package does not model.
type Unknown struct {
	Type    string
	Subtype string
	Raw     json.RawMessage
}

// Exit is always the last event: the process ended. The events channel is
// closed right after it. Expected is true when the host asked for the stop
// (Close, idle stop, eviction); Reason says why ("closed", "idle", "evicted").
type Exit struct {
	Code       int
	Err        error
	StderrTail string
	Expected   bool
	Reason     string
}

func (Init) isEvent()                {}
func (TextDelta) isEvent()           {}
func (ThinkingDelta) isEvent()       {}
func (AssistantText) isEvent()       {}
func (ToolUse) isEvent()             {}
func (ToolResult) isEvent()          {}
func (PermissionRequest) isEvent()   {}
func (PermissionCancelled) isEvent() {}
func (Lifecycle) isEvent()           {}
func (TaskStarted) isEvent()         {}
func (TaskNotification) isEvent()    {}
func (StatusChange) isEvent()        {}
func (Result) isEvent()              {}
func (DecodeError) isEvent()         {}
func (Unknown) isEvent()             {}
func (Exit) isEvent()                {}
