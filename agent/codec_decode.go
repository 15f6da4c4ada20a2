package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// decodeErrorLineMax is how much of an undecodable line a DecodeError keeps.
const decodeErrorLineMax = 256

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
func DecodeLine(line []byte) []Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var env wireEnvelope
	if err := json.Unmarshal(line, &env); err != nil {
		return []Event{newDecodeError(line, fmt.Errorf("decode line: %w", err))}
	}
	var (
		evs []Event
		err error
	)
	switch env.Type {
	case "stream_event":
		evs, err = decodeStreamEvent(line)
	case "assistant":
		evs, err = decodeAssistant(line)
	case "user":
		evs, err = decodeUser(line)
	case "system":
		evs, err = decodeSystem(line, env.Subtype)
	case "result":
		evs, err = decodeResult(line)
	case "control_request":
		evs, err = decodeControlRequest(line)
	case "control_response":
		evs, err = decodeControlResponse(line)
	case "control_cancel_request":
		var w wireControlCancel
		if err = json.Unmarshal(line, &w); err == nil {
			evs = []Event{PermissionCancelled{RequestID: w.RequestID}}
		}
	case "command_lifecycle":
		var w wireLifecycle
		if err = json.Unmarshal(line, &w); err == nil {
			evs = []Event{Lifecycle{UUID: w.CommandUUID, State: w.State}}
		}
	default:
		evs = []Event{unknown(env.Type, env.Subtype, line)}
	}
	if err != nil {
		return []Event{newDecodeError(line, fmt.Errorf("decode %s line: %w", env.Type, err))}
	}
	return evs
}

func newDecodeError(line []byte, err error) DecodeError {
	n := min(len(line), decodeErrorLineMax)
	return DecodeError{Line: bytes.Clone(line[:n]), Err: err}
}

func unknown(typ, subtype string, raw []byte) Unknown {
	return Unknown{Type: typ, Subtype: subtype, Raw: bytes.Clone(raw)}
}

// decodeStreamEvent handles type:"stream_event".
func decodeStreamEvent(line []byte) ([]Event, error) {
	var w wireStreamEvent
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
		return []Event{unknown("stream_event", "content_block_delta:"+e.Delta.Type, line)}, nil
	case "message_start", "message_delta", "message_stop", "content_block_start", "content_block_stop", "ping":
		// Boundaries and usage: the assistant and result lines carry the
		// same information in complete form.
		return nil, nil
	}
	return []Event{unknown("stream_event", e.Type, line)}, nil
}

// decodeAssistant handles type:"assistant": one event per content block.
func decodeAssistant(line []byte) ([]Event, error) {
	var w wireAssistant
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
			evs = append(evs, unknown("assistant", "block:"+b.Type, line))
		}
	}
	return evs, nil
}

// decodeUser handles type:"user" lines printed by the CLI.
func decodeUser(line []byte) ([]Event, error) {
	var w wireUser
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
	var blocks []wireContentBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, err
	}
	evs := make([]Event, 0, len(blocks))
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			text, err := flattenToolContent(b.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			evs = append(evs, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Content: text, ParentToolUseID: w.ParentToolUseID})
		case "text":
			evs = append(evs, UserText{UUID: w.UUID, Text: b.Text, ParentToolUseID: w.ParentToolUseID, Replay: w.IsReplay})
		case "image", "document":
			// Host-sent attachments echoed back; nothing to show.
		default:
			evs = append(evs, unknown("user", "block:"+b.Type, line))
		}
	}
	return evs, nil
}

// flattenToolContent turns a tool_result content (string, or an array of
// blocks) into text: text blocks joined by newlines, other blocks as
// "[type]".
func flattenToolContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []wireContentBlock
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
func rawText(raw json.RawMessage) string {
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
func decodeSystem(line []byte, subtype string) ([]Event, error) {
	switch subtype {
	case "init", "status", "task_started", "task_updated", "task_progress", "task_notification",
		"background_tasks_changed", "api_retry", "permission_denied", "informational":
	default:
		return []Event{unknown("system", subtype, line)}, nil
	}
	var w wireSystem
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
		var p wireTaskPatch
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
			Status: w.ErrorStatus, Error: rawText(w.Error)}
	case "permission_denied":
		ev = PermissionDenied{ToolName: w.ToolName, ToolUseID: w.ToolUseID, Message: w.Message,
			DecisionReason: w.DecisionReason, ReasonType: w.DecisionReasonType}
	case "informational":
		ev = Notice{Level: w.Level, Tag: w.Tag, Text: rawText(w.Content)}
	}
	return []Event{ev}, nil
}

// decodeResult handles type:"result".
func decodeResult(line []byte) ([]Event, error) {
	var w wireResult
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
		r.Errors = append(r.Errors, rawText(e))
	}
	if o := bytes.TrimSpace(w.Origin); len(o) > 0 {
		switch o[0] {
		case '{':
			var ow wireOrigin
			if err := json.Unmarshal(o, &ow); err != nil {
				return nil, fmt.Errorf("result origin: %w", err)
			}
			r.Origin = ow.Kind
			if r.Origin == "" {
				r.Origin = "unknown"
			}
		case 'n': // null
		default:
			r.Origin = rawText(o)
		}
	}
	return []Event{r}, nil
}

// decodeControlRequest handles type:"control_request" from the CLI.
func decodeControlRequest(line []byte) ([]Event, error) {
	var w wireControlRequestIn
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
	}
	return []Event{unknown("control_request", r.Subtype, line)}, nil
}

// decodeControlResponse handles type:"control_response" from the CLI.
func decodeControlResponse(line []byte) ([]Event, error) {
	var w wireControlResponseIn
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	r := w.Response
	return []Event{ControlResponse{RequestID: r.RequestID, Subtype: r.Subtype, Error: r.Error,
		ErrorCode: r.ErrorCode, Response: bytes.Clone(r.Response)}}, nil
}

// controlRequestID returns the request_id of an Unknown control_request
// line, so the session can refuse it instead of leaving the CLI waiting.
func controlRequestID(raw json.RawMessage) string {
	var w struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal(raw, &w) // Raw was decoded once already
	return w.RequestID
}
