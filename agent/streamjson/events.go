package streamjson

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
	CWD            string
	Version        string          // claude_code_version
	Raw            json.RawMessage // the whole line
}

// TextDelta is a streamed piece of assistant text (stream_event
// content_block_delta text_delta). ParentToolUseID is set for subagent output.
type TextDelta struct {
	Text            string
	ParentToolUseID string
}

// ThinkingDelta is a streamed piece of extended thinking.
type ThinkingDelta struct{ Text string }

// ToolInputDelta is a streamed piece of a tool call's JSON input
// (stream_event content_block_delta input_json_delta). The complete input
// arrives later as a ToolUse.
type ToolInputDelta struct {
	Index           int // content block index within the assistant message
	PartialJSON     string
	ParentToolUseID string
}

// UserText is text the CLI reports as a user message: markers such as
// "[Request interrupted by user]", local command output, a subagent's
// prompt (ParentToolUseID set) or, with Replay, the echo of a message the
// host sent (--replay-user-messages).
type UserText struct {
	UUID            string
	Text            string
	ParentToolUseID string
	Replay          bool
}

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
	ToolUseID       string
	IsError         bool
	Content         string
	ParentToolUseID string // set for tool calls made inside a subagent
}

// PermissionRequest is a control_request can_use_tool: the CLI waits until the
// host answers it with agent.Session.Respond (or cancels it with a
// PermissionCancelled event).
type PermissionRequest struct {
	RequestID               string
	ToolName                string
	DisplayName             string
	Input                   json.RawMessage
	Description             string
	BlockedPath             string
	DecisionReason          string
	DecisionReasonType      string            // e.g. "workingDir", "hook"
	Suggestions             []json.RawMessage // permission_suggestions, verbatim
	ToolUseID               string
	AgentID                 string          // set when a subagent asks
	RequiresUserInteraction bool            // AskUserQuestion, ExitPlanMode
	Raw                     json.RawMessage // the whole control_request line
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
	TaskType    string // e.g. "local_bash", "local_agent"
	Description string
	ToolUseID   string
	Background  bool // is_backgrounded: the turn's result may come before the task ends
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

// TaskUpdated reports system/task_updated: a patch to a task's state
// (Status is empty when the patch does not change it).
type TaskUpdated struct {
	TaskID string
	Status string
	Patch  json.RawMessage
}

// TaskProgress reports system/task_progress of a running subagent.
type TaskProgress struct {
	TaskID       string
	ToolUseID    string
	Description  string
	LastToolName string
}

// Elicitation reports a control_request subtype "elicitation": an MCP
// server (one the profile configured, speaking MCP to the CLI) asks the
// user for input (MCP elicitation/create). The CLI waits for an answer
// (EncodeElicitationResponse); a control error makes it tell the server
// "cancel". A control_cancel_request with the same id (PermissionCancelled)
// withdraws it. Observed with CLI 2.1.330 (testdata/elicitation.jsonl).
type Elicitation struct {
	RequestID string
	Server    string // mcp_server_name
	Message   string
	Mode      string // "form" (a schema to fill in) or "url" (open URL)
	URL       string // mode "url" only
	// ElicitationID identifies a url-mode elicitation ("" for a form).
	ElicitationID string
	// Schema is requested_schema: a flat JSON Schema object whose
	// properties are strings (optionally enum), numbers, integers or
	// booleans.
	Schema json.RawMessage
	// PropertyOrder is the order the CLI suggests for the schema's
	// properties (property_order; may be empty).
	PropertyOrder []string
	Title         string // optional display fields of the server
	DisplayName   string
	Description   string
}

// Elicitation answers (the action field of the response).
const (
	ElicitAccept  = "accept"  // with content: the filled-in form
	ElicitDecline = "decline" // the user said no
	ElicitCancel  = "cancel"  // dismissed without an answer
)

// BackgroundTask is one entry of a BackgroundTasks list.
type BackgroundTask struct {
	TaskID      string
	TaskType    string
	Description string
}

// BackgroundTasks reports system/background_tasks_changed: the complete
// list of background tasks now running (empty when none).
type BackgroundTasks struct{ Tasks []BackgroundTask }

// APIRetry reports system/api_retry: the CLI is retrying a failed model API
// call after Delay.
type APIRetry struct {
	Attempt    int
	MaxRetries int
	Delay      time.Duration
	Status     int    // HTTP status of the failed call, 0 if none
	Error      string // e.g. "server_error"
}

// PermissionDenied reports system/permission_denied: the CLI refused a tool
// call without asking the host (no permission prompt tool, or a classifier).
type PermissionDenied struct {
	ToolName       string
	ToolUseID      string
	Message        string
	DecisionReason string // e.g. "Classifier unavailable"; may be empty
	ReasonType     string // decision_reason_type, e.g. "classifier"
}

// Notice reports system/informational: a message from the CLI meant for the
// user (Level e.g. "warning", Tag a stable identifier).
type Notice struct {
	Level string
	Tag   string
	Text  string
}

// HookCallback is a control_request hook_callback (only sent for hooks the
// host registered). The agent.Session answers it itself with an empty success
// ("continue with the normal flow"), so consumers only observe it.
type HookCallback struct {
	RequestID  string
	CallbackID string
	ToolUseID  string
	Input      json.RawMessage
}

// ControlResponse is the CLI's answer to a control_request the host sent.
// agent.Session consumes the answers to its own requests (Interrupt, SetModel,
// SetPermissionMode) and drops any other one: it never appears on
// agent.Session.Events. Decoder.Decode returns it so other readers of the stream see
// everything.
type ControlResponse struct {
	RequestID string
	Subtype   string // "success" or "error"
	Error     string // for "error"
	ErrorCode string // for "error", e.g. "bypass_not_launched"
	Response  json.RawMessage
}

// StatusChange reports system/status (e.g. a permission mode change).
// Status is "requesting" when a model call starts and "" when only the
// permission mode changed; UserMessageUUIDs lists the host messages the
// request carries (when the CLI reports them).
type StatusChange struct {
	Status           string
	PermissionMode   string
	UserMessageUUIDs []string
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
	NoCost         bool // the agent reports no cost (an ACP agent): CostUSD is not a cost of $0
	Usage          Usage
	StopReason     string
	TerminalReason string
	APIErrorStatus int    // HTTP status of the model API error that ended the turn (401 = bad credentials); 0 = none
	Origin         string // origin.kind, e.g. "task-notification"; "" for host-started turns
	UUID           string
	// Index is result_index: the CLI numbers the results of a process 0, 1,
	// 2, … (2.1.330 and later), so a gap means a result was lost. Indexed
	// is false when the line has none (older CLIs, synthesized results).
	Index   int
	Indexed bool
	// UserMessageUUID is the uuid of the host message the turn answers
	// (the last one when several were folded into the turn);
	// UserMessageUUIDs lists all of them. Both empty on a turn the CLI
	// started itself (a background task's end) and from older CLIs.
	UserMessageUUID  string
	UserMessageUUIDs []string
	Raw              json.RawMessage // the whole line (modelUsage, permission_denials, ...)
}

// ResultsLost reports a gap in the results' numbering (Result.Index): the
// results numbered First to First+Count-1 never arrived (a line lost or
// undecodable). The session emits it just before the Result that showed
// the gap, so the conversation can say that a reply went missing instead
// of dropping it silently.
type ResultsLost struct {
	First, Count int
}

// DecodeError reports a stdout line that could not be decoded (not JSON, or
// longer than the line cap). The stream goes on after it.
type DecodeError struct {
	Line []byte // at most the first 256 bytes
	Err  error
	// ControlRequestID is the request_id of a control_request line that
	// could not be decoded (a field of an unexpected type), so that the
	// host can still answer it with an error instead of leaving the CLI
	// waiting; "" for other lines.
	ControlRequestID string
}

// Unknown is a well-formed JSON line of a kind this package does not model
// (an unknown type, system subtype, control request subtype or stream event).
// It is logged at debug level and otherwise ignored.
type Unknown struct {
	Type    string
	Subtype string
	Raw     json.RawMessage
}

// MCPMessage is a control_request mcp_message: a JSON-RPC message from the
// CLI for the host's MCP server Server. The agent.Session answers it itself with
// the server from agent.Options.MCPServers (or an error for an unknown server), so
// it never appears on agent.Session.Events; Decoder.Decode returns it so other
// readers of the stream see everything.
type MCPMessage struct {
	RequestID string
	Server    string
	Message   json.RawMessage
}

// EventsDropped stands in a session's event stream where events were
// dropped because the consumer fell behind (see agent.Session.Events). It never
// appears while the consumer keeps up.
type EventsDropped struct {
	// Count is how many events were dropped here: streaming deltas
	// (thinking, tool input) and progress reports (task progress and
	// updates, background task lists, API retries, status changes, hook
	// callbacks, unknown output). Text deltas, tool calls and results,
	// permission requests, lifecycle receipts, results and the exit are
	// never among them.
	Count int
	// Overflow is set when the queue stayed over its limit after dropping
	// what it could: the session is being stopped (an Exit follows, as
	// for a crash) and from here on only Result, PermissionRequest,
	// PermissionCancelled, Lifecycle and Exit events are queued. Err says
	// what happened.
	Overflow bool
	Err      error
}

// LimitHit reports that the agent hit a limit of its cgroup (see
// agent.Options.Cgroups). Counts are new since the previous LimitHit of the same
// kind; a session reports each kind at most once per second.
type LimitHit struct {
	// Limit is sandbox.LimitMemory (Count processes were killed by the
	// memory cap) or sandbox.LimitProcesses (Count forks or new threads
	// were refused by the process cap).
	Limit string
	Count int64
	// AfterExit is set when the counters were read after the process
	// exited: the Exit that follows tells the rest.
	AfterExit bool
}

// Exit is always the last event: the process ended. The events channel is
// closed right after it. Expected is true when the host asked for the stop
// (Close, idle stop, eviction); Reason says why ("closed", "idle", "evicted").
// Limit is sandbox.LimitMemory when an unexpected exit came right after a
// kill by the agent's memory cap (the CLI itself was killed), else "".
type Exit struct {
	Code       int
	Err        error
	StderrTail string
	Expected   bool
	Reason     string
	Limit      string
}

func (Init) isEvent()                {}
func (TextDelta) isEvent()           {}
func (ThinkingDelta) isEvent()       {}
func (ToolInputDelta) isEvent()      {}
func (UserText) isEvent()            {}
func (TaskUpdated) isEvent()         {}
func (TaskProgress) isEvent()        {}
func (BackgroundTasks) isEvent()     {}
func (Elicitation) isEvent()         {}
func (APIRetry) isEvent()            {}
func (PermissionDenied) isEvent()    {}
func (Notice) isEvent()              {}
func (HookCallback) isEvent()        {}
func (ControlResponse) isEvent()     {}
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
func (ResultsLost) isEvent()         {}
func (DecodeError) isEvent()         {}
func (Unknown) isEvent()             {}
func (Exit) isEvent()                {}
func (MCPMessage) isEvent()          {}
func (EventsDropped) isEvent()       {}
func (LimitHit) isEvent()            {}
