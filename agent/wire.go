package agent

import "encoding/json"

// This file holds the stream-json wire shapes: the lines the CLI prints
// (decoded by DecodeLine) and the lines the host writes (marshalled by the
// encode* functions only). Field names follow the captures in
// shared/protocol; fields this package does not need are not declared and
// are ignored when decoding.

// wireEnvelope is the part of every CLI line needed to pick its shape.
type wireEnvelope struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
}

// wireSystem is any type:"system" line. One struct serves every known
// subtype; each subtype fills only its own fields.
type wireSystem struct {
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`

	// init
	CWD            string   `json:"cwd"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	Tools          []string `json:"tools"`
	Version        string   `json:"claude_code_version"`

	// status (Status is null when only the permission mode changed), and
	// task_notification status
	Status           string   `json:"status"`
	UserMessageUUIDs []string `json:"user_message_uuids"`

	// task_started, task_updated, task_progress, task_notification
	TaskID         string          `json:"task_id"`
	TaskType       string          `json:"task_type"`
	ToolUseID      string          `json:"tool_use_id"`
	Description    string          `json:"description"`
	IsBackgrounded bool            `json:"is_backgrounded"`
	Summary        string          `json:"summary"`
	OutputFile     string          `json:"output_file"`
	Patch          json.RawMessage `json:"patch"`
	LastToolName   string          `json:"last_tool_name"`

	// background_tasks_changed
	Tasks []wireBackgroundTask `json:"tasks"`

	// api_retry
	Attempt      int             `json:"attempt"`
	MaxRetries   int             `json:"max_retries"`
	RetryDelayMS float64         `json:"retry_delay_ms"`
	ErrorStatus  int             `json:"error_status"`
	Error        json.RawMessage `json:"error"`

	// permission_denied
	ToolName           string `json:"tool_name"`
	Message            string `json:"message"`
	DecisionReason     string `json:"decision_reason"`
	DecisionReasonType string `json:"decision_reason_type"`

	// informational
	Content json.RawMessage `json:"content"`
	Level   string          `json:"level"`
	Tag     string          `json:"tag"`
}

type wireBackgroundTask struct {
	TaskID      string `json:"task_id"`
	TaskType    string `json:"task_type"`
	Description string `json:"description"`
}

// wireTaskPatch is the part of a task_updated patch this package reads.
type wireTaskPatch struct {
	Status string `json:"status"`
}

// wireStreamEvent is a type:"stream_event" line: one raw Messages API SSE
// event forwarded by the CLI (--include-partial-messages).
type wireStreamEvent struct {
	Event struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			Thinking    string `json:"thinking"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	} `json:"event"`
	ParentToolUseID string `json:"parent_tool_use_id"`
}

// wireContentBlock is one content block of an assistant or user message.
type wireContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// wireAssistant is a type:"assistant" line: one (partial) assistant message,
// usually carrying a single content block.
type wireAssistant struct {
	Message struct {
		ID      string             `json:"id"`
		Content []wireContentBlock `json:"content"`
	} `json:"message"`
	ParentToolUseID string `json:"parent_tool_use_id"`
}

// wireUser is a type:"user" line printed by the CLI: tool results, markers,
// subagent prompts, replays. Content is a string or an array of blocks.
type wireUser struct {
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	ParentToolUseID string `json:"parent_tool_use_id"`
	UUID            string `json:"uuid"`
	IsReplay        bool   `json:"isReplay"`
}

// wireResult is a type:"result" line.
type wireResult struct {
	Subtype        string            `json:"subtype"`
	IsError        bool              `json:"is_error"`
	Result         string            `json:"result"`
	Errors         []json.RawMessage `json:"errors"`
	SessionID      string            `json:"session_id"`
	NumTurns       int               `json:"num_turns"`
	DurationMS     float64           `json:"duration_ms"`
	TotalCostUSD   float64           `json:"total_cost_usd"`
	Usage          wireUsage         `json:"usage"`
	StopReason     string            `json:"stop_reason"`
	TerminalReason string            `json:"terminal_reason"`
	APIErrorStatus int               `json:"api_error_status"` // null when no API error
	Origin         json.RawMessage   `json:"origin"`
	UUID           string            `json:"uuid"`
}

type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// wireOrigin is a result's origin object, e.g. {"kind":"task-notification"}.
type wireOrigin struct {
	Kind string `json:"kind"`
}

// wireControlRequestIn is a type:"control_request" line from the CLI.
type wireControlRequestIn struct {
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype string `json:"subtype"`

		// can_use_tool
		ToolName                string            `json:"tool_name"`
		DisplayName             string            `json:"display_name"`
		Input                   json.RawMessage   `json:"input"`
		Description             string            `json:"description"`
		PermissionSuggestions   []json.RawMessage `json:"permission_suggestions"`
		BlockedPath             string            `json:"blocked_path"`
		DecisionReason          string            `json:"decision_reason"`
		DecisionReasonType      string            `json:"decision_reason_type"`
		ToolUseID               string            `json:"tool_use_id"`
		AgentID                 string            `json:"agent_id"`
		RequiresUserInteraction bool              `json:"requires_user_interaction"`

		// hook_callback (also Input, ToolUseID)
		CallbackID string `json:"callback_id"`

		// mcp_message: a JSON-RPC message for an SDK MCP server of the host
		ServerName string          `json:"server_name"`
		Message    json.RawMessage `json:"message"`
	} `json:"request"`
}

// wireControlResponseIn is a type:"control_response" line from the CLI.
type wireControlResponseIn struct {
	Response struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
		ErrorCode string          `json:"error_code"`
	} `json:"response"`
}

// wireControlCancel is a type:"control_cancel_request" line.
type wireControlCancel struct {
	RequestID string `json:"request_id"`
}

// wireLifecycle is a type:"command_lifecycle" line.
type wireLifecycle struct {
	CommandUUID string `json:"command_uuid"`
	State       string `json:"state"`
}

// ---- host → CLI ----

// wireUserMessageOut is a user message written to stdin. ParentToolUseID
// is always null: the captures sent it that way.
type wireUserMessageOut struct {
	Type            string             `json:"type"` // "user"
	Message         wireUserContentOut `json:"message"`
	ParentToolUseID *string            `json:"parent_tool_use_id"`
	UUID            string             `json:"uuid"`
}

// wireUserContentOut is the message of a user line. Content is a string
// (text only) or []wireBlockOut (with images).
type wireUserContentOut struct {
	Role    string `json:"role"` // "user"
	Content any    `json:"content"`
}

// wireBlockOut is a text or image content block sent by the host.
type wireBlockOut struct {
	Type   string           `json:"type"` // "text" or "image"
	Text   string           `json:"text,omitempty"`
	Source *wireImageSrcOut `json:"source,omitempty"`
}

type wireImageSrcOut struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as standard base64
}

// wireControlResponseOut answers a control_request of the CLI. The decision
// sits in Response.Response: any other shape is ignored by the CLI and the
// turn hangs.
type wireControlResponseOut struct {
	Type     string                     `json:"type"` // "control_response"
	Response wireControlResponseBodyOut `json:"response"`
}

type wireControlResponseBodyOut struct {
	Subtype   string `json:"subtype"` // "success" or "error"
	RequestID string `json:"request_id"`
	Response  any    `json:"response,omitempty"` // success only
	Error     string `json:"error,omitempty"`    // error only
}

// wirePermissionAllow is the success payload that lets a tool run.
// UpdatedInput is always present: the CLI replaces the input wholesale.
type wirePermissionAllow struct {
	Behavior           string            `json:"behavior"` // "allow"
	UpdatedInput       json.RawMessage   `json:"updatedInput"`
	UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
}

// wirePermissionDeny is the success payload that refuses a tool call.
type wirePermissionDeny struct {
	Behavior  string `json:"behavior"` // "deny"
	Message   string `json:"message"`
	Interrupt bool   `json:"interrupt,omitempty"`
}

// wireControlRequestOut is a control_request written by the host.
type wireControlRequestOut struct {
	Type      string `json:"type"` // "control_request"
	RequestID string `json:"request_id"`
	Request   any    `json:"request"`
}

// The request payloads of wireControlRequestOut.
type (
	wireInterruptOut struct {
		Subtype string `json:"subtype"` // "interrupt"
	}
	wireSetModelOut struct {
		Subtype string `json:"subtype"` // "set_model"
		Model   string `json:"model"`
	}
	wireSetPermissionModeOut struct {
		Subtype string `json:"subtype"` // "set_permission_mode"
		Mode    string `json:"mode"`
	}
	wireInitializeOut struct {
		Subtype            string   `json:"subtype"` // "initialize"
		AppendSystemPrompt string   `json:"appendSystemPrompt,omitempty"`
		SDKMCPServers      []string `json:"sdkMcpServers,omitempty"`
	}
	wireEndSessionOut struct {
		Subtype string `json:"subtype"` // "end_session"
	}
)

// wireMCPResponseOut is the success payload answering an mcp_message:
// the JSON-RPC response, or null for a notification.
type wireMCPResponseOut struct {
	MCPResponse json.RawMessage `json:"mcp_response"`
}

// wireEmpty is the empty success payload ({}), used to answer hook callbacks.
type wireEmpty struct{}
