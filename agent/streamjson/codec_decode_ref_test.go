package streamjson

// This file keeps the encoding/json decoder that DecodeLine replaced, as
// the reference the fastjson decoder is checked against
// (TestDecodeMatchesReference, FuzzDecodeMatchesReference).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// stdEnvelope is the part of every CLI line needed to pick its shape.
type stdEnvelope struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
}

// stdSystem is any type:"system" line. One struct serves every known
// subtype; each subtype fills only its own fields.
type stdSystem struct {
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
	Tasks []stdBackgroundTask `json:"tasks"`

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

type stdBackgroundTask struct {
	TaskID      string `json:"task_id"`
	TaskType    string `json:"task_type"`
	Description string `json:"description"`
}

// stdTaskPatch is the part of a task_updated patch this package reads.
type stdTaskPatch struct {
	Status string `json:"status"`
}

// stdStreamEvent is a type:"stream_event" line: one raw Messages API SSE
// event forwarded by the CLI (--include-partial-messages).
type stdStreamEvent struct {
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

// stdContentBlock is one content block of an assistant or user message.
type stdContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// stdAssistant is a type:"assistant" line: one (partial) assistant message,
// usually carrying a single content block.
type stdAssistant struct {
	Message struct {
		ID      string            `json:"id"`
		Content []stdContentBlock `json:"content"`
	} `json:"message"`
	ParentToolUseID string `json:"parent_tool_use_id"`
}

// stdUser is a type:"user" line printed by the CLI: tool results, markers,
// subagent prompts, replays. Content is a string or an array of blocks.
type stdUser struct {
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	ParentToolUseID string `json:"parent_tool_use_id"`
	UUID            string `json:"uuid"`
	IsReplay        bool   `json:"isReplay"`
}

// stdResult is a type:"result" line.
type stdResult struct {
	Subtype        string            `json:"subtype"`
	IsError        bool              `json:"is_error"`
	Result         string            `json:"result"`
	Errors         []json.RawMessage `json:"errors"`
	SessionID      string            `json:"session_id"`
	NumTurns       int               `json:"num_turns"`
	DurationMS     float64           `json:"duration_ms"`
	TotalCostUSD   float64           `json:"total_cost_usd"`
	Usage          stdUsage          `json:"usage"`
	StopReason     string            `json:"stop_reason"`
	TerminalReason string            `json:"terminal_reason"`
	APIErrorStatus int               `json:"api_error_status"` // null when no API error
	Origin         json.RawMessage   `json:"origin"`
	UUID           string            `json:"uuid"`
	ResultIndex    json.RawMessage   `json:"result_index"`
	UserMsgUUID    json.RawMessage   `json:"user_message_uuid"`
	UserMsgUUIDs   json.RawMessage   `json:"user_message_uuids"`
}

type stdUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// stdOrigin is a result's origin object, e.g. {"kind":"task-notification"}.
type stdOrigin struct {
	Kind string `json:"kind"`
}

// stdControlRequestIn is a type:"control_request" line from the CLI.
type stdControlRequestIn struct {
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
		Message    json.RawMessage `json:"message"` // also elicitation's message (a string)

		// elicitation: an MCP server of the profile asks the user
		MCPServerName  string          `json:"mcp_server_name"`
		Mode           string          `json:"mode"`
		URL            string          `json:"url"`
		ElicitationID  string          `json:"elicitation_id"`
		RequestedSchma json.RawMessage `json:"requested_schema"`
		PropertyOrder  []string        `json:"property_order"`
		Title          string          `json:"title"` // display_name and description: as for can_use_tool
	} `json:"request"`
}

// stdControlResponseIn is a type:"control_response" line from the CLI.
type stdControlResponseIn struct {
	Response struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
		ErrorCode string          `json:"error_code"`
	} `json:"response"`
}

// stdControlCancel is a type:"control_cancel_request" line.
type stdControlCancel struct {
	RequestID string `json:"request_id"`
}

// stdLifecycle is a type:"command_lifecycle" line.
type stdLifecycle struct {
	CommandUUID string `json:"command_uuid"`
	State       string `json:"state"`
}

// DecodeLine decodes one line of the CLI's stdout into events. It never
// fails: a line that is not a JSON object, or a known kind with fields of
// the wrong type, becomes a DecodeError; a well-formed line of a kind this
// package does not model becomes an Unknown. Blank lines and stream events
// that carry nothing new (message_start, content_block_stop, ...) yield no
// event. One line may yield several events (an assistant message with
// several content blocks, a user line with several tool results).
//
// DecodeLine does not retain line: every returned byte slice is a copy, so
// the caller may reuse the buffer.
func stdDecodeLine(line []byte) []Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var env stdEnvelope
	if err := json.Unmarshal(line, &env); err != nil {
		return []Event{stdNewDecodeError(line, fmt.Errorf("decode line: %w", err))}
	}
	var (
		evs []Event
		err error
	)
	switch env.Type {
	case "stream_event":
		evs, err = stdDecodeStreamEvent(line)
	case "assistant":
		evs, err = stdDecodeAssistant(line)
	case "user":
		evs, err = stdDecodeUser(line)
	case "system":
		evs, err = stdDecodeSystem(line, env.Subtype)
	case "result":
		evs, err = stdDecodeResult(line)
	case "control_request":
		evs, err = stdDecodeControlRequest(line)
	case "control_response":
		evs, err = stdDecodeControlResponse(line)
	case "control_cancel_request":
		var w stdControlCancel
		if err = json.Unmarshal(line, &w); err == nil {
			evs = []Event{PermissionCancelled{RequestID: w.RequestID}}
		}
	case "command_lifecycle":
		var w stdLifecycle
		if err = json.Unmarshal(line, &w); err == nil {
			evs = []Event{Lifecycle{UUID: w.CommandUUID, State: w.State}}
		}
	default:
		evs = []Event{stdUnknown(env.Type, env.Subtype, line)}
	}
	if err != nil {
		de := stdNewDecodeError(line, fmt.Errorf("decode %s line: %w", env.Type, err))
		if env.Type == "control_request" {
			var id struct {
				RequestID json.RawMessage `json:"request_id"`
			}
			var s string
			if json.Unmarshal(line, &id) == nil && len(id.RequestID) > 0 && id.RequestID[0] == '"' && json.Unmarshal(id.RequestID, &s) == nil {
				de.ControlRequestID = s
			}
		}
		return []Event{de}
	}
	return evs
}

func stdNewDecodeError(line []byte, err error) DecodeError {
	n := min(len(line), decodeErrorLineMax)
	return DecodeError{Line: bytes.Clone(line[:n]), Err: err}
}

func stdUnknown(typ, subtype string, raw []byte) Unknown {
	return Unknown{Type: typ, Subtype: subtype, Raw: bytes.Clone(raw)}
}

// decodeStreamEvent handles type:"stream_event".
func stdDecodeStreamEvent(line []byte) ([]Event, error) {
	var w stdStreamEvent
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	e := w.Event
	switch e.Type {
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			return []Event{TextDelta{Text: e.Delta.Text, ParentToolUseID: w.ParentToolUseID}}, nil
		case "thinking_delta":
			return []Event{ThinkingDelta{Text: e.Delta.Thinking}}, nil
		case "input_json_delta":
			return []Event{ToolInputDelta{Index: e.Index, PartialJSON: e.Delta.PartialJSON, ParentToolUseID: w.ParentToolUseID}}, nil
		case "signature_delta", "citations_delta":
			return nil, nil
		}
		return []Event{stdUnknown("stream_event", "content_block_delta:"+e.Delta.Type, line)}, nil
	case "message_start", "message_delta", "message_stop", "content_block_start", "content_block_stop", "ping":
		// Boundaries and usage: the assistant and result lines carry the
		// same information in complete form.
		return nil, nil
	}
	return []Event{stdUnknown("stream_event", e.Type, line)}, nil
}

// decodeAssistant handles type:"assistant": one event per content block.
func stdDecodeAssistant(line []byte) ([]Event, error) {
	var w stdAssistant
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	evs := make([]Event, 0, len(w.Message.Content))
	for _, b := range w.Message.Content {
		switch b.Type {
		case "text":
			evs = append(evs, AssistantText{MessageID: w.Message.ID, Text: b.Text, ParentToolUseID: w.ParentToolUseID})
		case "tool_use", "server_tool_use":
			evs = append(evs, ToolUse{ID: b.ID, Name: b.Name, Input: bytes.Clone(b.Input), ParentToolUseID: w.ParentToolUseID})
		case "thinking", "redacted_thinking":
			// Already streamed as ThinkingDelta; nothing to render twice.
		default:
			evs = append(evs, stdUnknown("assistant", "block:"+b.Type, line))
		}
	}
	return evs, nil
}

// decodeUser handles type:"user" lines printed by the CLI.
func stdDecodeUser(line []byte) ([]Event, error) {
	var w stdUser
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	content := bytes.TrimSpace(w.Message.Content)
	if len(content) == 0 || content[0] == 'n' { // absent or null
		return nil, nil
	}
	if content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, err
		}
		return []Event{UserText{UUID: w.UUID, Text: s, ParentToolUseID: w.ParentToolUseID, Replay: w.IsReplay}}, nil
	}
	var blocks []stdContentBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, err
	}
	evs := make([]Event, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			text, err := stdFlattenToolContent(b.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			evs = append(evs, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Content: text, ParentToolUseID: w.ParentToolUseID})
		case "text":
			evs = append(evs, UserText{UUID: w.UUID, Text: b.Text, ParentToolUseID: w.ParentToolUseID, Replay: w.IsReplay})
		case "image", "document":
			// Host-sent attachments echoed back; nothing to show.
		default:
			evs = append(evs, stdUnknown("user", "block:"+b.Type, line))
		}
	}
	return evs, nil
}

// flattenToolContent turns a tool_result content (string, or an array of
// blocks) into text: text blocks joined by newlines, other blocks as
// "[type]".
func stdFlattenToolContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []stdContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", err
	}
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n"), nil
}

// rawText returns a JSON string's value, or the raw JSON of anything else.
func stdRawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// decodeSystem handles type:"system" lines by subtype.
func stdDecodeSystem(line []byte, subtype string) ([]Event, error) {
	switch subtype {
	case "init", "status", "task_started", "task_updated", "task_progress", "task_notification",
		"background_tasks_changed", "api_retry", "permission_denied", "informational":
	default:
		return []Event{stdUnknown("system", subtype, line)}, nil
	}
	var w stdSystem
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	var ev Event
	switch subtype {
	case "init":
		ev = Init{SessionID: w.SessionID, Model: w.Model, PermissionMode: w.PermissionMode, Tools: w.Tools,
			CWD: w.CWD, Version: w.Version, Raw: bytes.Clone(line)}
	case "status":
		ev = StatusChange{Status: w.Status, PermissionMode: w.PermissionMode, UserMessageUUIDs: w.UserMessageUUIDs}
	case "task_started":
		ev = TaskStarted{TaskID: w.TaskID, TaskType: w.TaskType, Description: w.Description, ToolUseID: w.ToolUseID, Background: w.IsBackgrounded}
	case "task_updated":
		var p stdTaskPatch
		if len(w.Patch) > 0 && w.Patch[0] == '{' {
			if err := json.Unmarshal(w.Patch, &p); err != nil {
				return nil, fmt.Errorf("task_updated patch: %w", err)
			}
		}
		ev = TaskUpdated{TaskID: w.TaskID, Status: p.Status, Patch: bytes.Clone(w.Patch)}
	case "task_progress":
		ev = TaskProgress{TaskID: w.TaskID, ToolUseID: w.ToolUseID, Description: w.Description, LastToolName: w.LastToolName}
	case "task_notification":
		ev = TaskNotification{TaskID: w.TaskID, Status: w.Status, Summary: w.Summary, OutputFile: w.OutputFile, ToolUseID: w.ToolUseID}
	case "background_tasks_changed":
		tasks := make([]BackgroundTask, 0, len(w.Tasks))
		for _, t := range w.Tasks {
			tasks = append(tasks, BackgroundTask(t))
		}
		ev = BackgroundTasks{Tasks: tasks}
	case "api_retry":
		ev = APIRetry{Attempt: w.Attempt, MaxRetries: w.MaxRetries,
			Delay:  time.Duration(w.RetryDelayMS * float64(time.Millisecond)),
			Status: w.ErrorStatus, Error: stdRawText(w.Error)}
	case "permission_denied":
		ev = PermissionDenied{ToolName: w.ToolName, ToolUseID: w.ToolUseID, Message: w.Message,
			DecisionReason: w.DecisionReason, ReasonType: w.DecisionReasonType}
	case "informational":
		ev = Notice{Level: w.Level, Tag: w.Tag, Text: stdRawText(w.Content)}
	}
	return []Event{ev}, nil
}

// decodeResult handles type:"result".
func stdDecodeResult(line []byte) ([]Event, error) {
	var w stdResult
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	r := Result{
		Subtype: w.Subtype, IsError: w.IsError, Text: w.Result, SessionID: w.SessionID,
		NumTurns: w.NumTurns, Duration: time.Duration(w.DurationMS * float64(time.Millisecond)),
		CostUSD: w.TotalCostUSD, Usage: Usage(w.Usage), StopReason: w.StopReason,
		TerminalReason: w.TerminalReason, APIErrorStatus: w.APIErrorStatus, UUID: w.UUID, Raw: bytes.Clone(line),
	}
	for _, e := range w.Errors {
		r.Errors = append(r.Errors, stdRawText(e))
	}
	// result_index and user_message_uuid(s): optional, wrong types ignored.
	var idx int32
	if json.Unmarshal(w.ResultIndex, &idx) == nil && idx >= 0 && len(bytes.TrimSpace(w.ResultIndex)) > 0 && w.ResultIndex[0] != 'n' {
		r.Index, r.Indexed = int(idx), true
	}
	_ = json.Unmarshal(w.UserMsgUUID, &r.UserMessageUUID)
	var list []json.RawMessage
	if json.Unmarshal(w.UserMsgUUIDs, &list) == nil {
		for _, e := range list {
			var u string
			if len(e) > 0 && e[0] == '"' && json.Unmarshal(e, &u) == nil {
				r.UserMessageUUIDs = append(r.UserMessageUUIDs, u)
			}
		}
	}
	if o := bytes.TrimSpace(w.Origin); len(o) > 0 {
		switch o[0] {
		case '{':
			var ow stdOrigin
			if err := json.Unmarshal(o, &ow); err != nil {
				return nil, fmt.Errorf("result origin: %w", err)
			}
			r.Origin = ow.Kind
			if r.Origin == "" {
				r.Origin = "unknown"
			}
		case 'n': // null
		default:
			r.Origin = stdRawText(o)
		}
	}
	return []Event{r}, nil
}

// decodeControlRequest handles type:"control_request" from the CLI.
func stdDecodeControlRequest(line []byte) ([]Event, error) {
	var w stdControlRequestIn
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	r := w.Request
	switch r.Subtype {
	case "can_use_tool":
		p := PermissionRequest{
			RequestID: w.RequestID, ToolName: r.ToolName, DisplayName: r.DisplayName,
			Input: bytes.Clone(r.Input), Description: r.Description, BlockedPath: r.BlockedPath,
			DecisionReason: r.DecisionReason, DecisionReasonType: r.DecisionReasonType,
			ToolUseID: r.ToolUseID, AgentID: r.AgentID, RequiresUserInteraction: r.RequiresUserInteraction,
			Raw: bytes.Clone(line),
		}
		for _, s := range r.PermissionSuggestions {
			p.Suggestions = append(p.Suggestions, bytes.Clone(s))
		}
		return []Event{p}, nil
	case "hook_callback":
		return []Event{HookCallback{RequestID: w.RequestID, CallbackID: r.CallbackID, ToolUseID: r.ToolUseID, Input: bytes.Clone(r.Input)}}, nil
	case "mcp_message":
		return []Event{MCPMessage{RequestID: w.RequestID, Server: r.ServerName, Message: bytes.Clone(r.Message)}}, nil
	case "elicitation":
		var msg string
		if len(r.Message) > 0 && string(r.Message) != "null" {
			if err := json.Unmarshal(r.Message, &msg); err != nil {
				return nil, err
			}
		}
		return []Event{Elicitation{RequestID: w.RequestID, Server: r.MCPServerName, Message: msg, Mode: r.Mode, URL: r.URL,
			ElicitationID: r.ElicitationID, Schema: bytes.Clone(r.RequestedSchma), PropertyOrder: r.PropertyOrder,
			Title: r.Title, DisplayName: r.DisplayName, Description: r.Description}}, nil
	}
	return []Event{stdUnknown("control_request", r.Subtype, line)}, nil
}

// decodeControlResponse handles type:"control_response" from the CLI.
func stdDecodeControlResponse(line []byte) ([]Event, error) {
	var w stdControlResponseIn
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	r := w.Response
	return []Event{ControlResponse{RequestID: r.RequestID, Subtype: r.Subtype, Error: r.Error,
		ErrorCode: r.ErrorCode, Response: bytes.Clone(r.Response)}}, nil
}
