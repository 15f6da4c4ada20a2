package streamjson

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// decodeErrorLineMax is how much of an undecodable line a DecodeError keeps.
const decodeErrorLineMax = 256

// Decoder decodes the CLI's stdout line by line, with a parser kept
// between lines, so that decoding a stream allocates little more than the
// events themselves. The zero value is ready to use. Not safe for
// concurrent use.
type Decoder struct {
	skim  skim       // the current line, validated
	index objIndexes // the objects of the current line
}

// Decode decodes one line of the CLI's stdout into events. It never fails:
// a line that is not valid JSON, or a known kind with fields of the wrong
// type, becomes a DecodeError; a well-formed line of a kind this package
// does not model becomes an Unknown. Blank lines and stream events that
// carry nothing new (message_start, content_block_stop, ...) yield no
// event. One line may yield several events (an assistant message with
// several content blocks, a user line with several tool results). Decode
// does not retain line: every returned byte slice is a copy, so the
// caller may reuse the buffer.
//
// Speed: the line is validated in one pass (validJSON: what
// encoding/json.Valid accepts) and only the fields an event needs are read
// from it, skipping the rest (jsonskim.go); no tree is built. This
// replaced two encoding/json.Unmarshal calls per line (several times
// slower: BenchmarkDecode against BenchmarkDecodeReference).
func (d *Decoder) Decode(line []byte) []Event {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if !d.skim.validate(line) {
		return []Event{newDecodeError(line, errors.New("decode line: not valid JSON"))}
	}
	v := jval(line)
	if k := v.kind(); k != '{' && k != 'n' {
		return []Event{newDecodeError(line, fmt.Errorf("decode line: a %s, not an object", kindName(k)))}
	}
	d.index.reset()
	d.index.sk = &d.skim
	if v.kind() == '{' {
		d.index.objs = append(d.index.objs, indexedObj{start: &v[0], n: len(v), ms: d.skim.top})
	}
	defer d.skim.release()
	f := fields{index: &d.index}
	typ, subtype := f.str(v, "type"), f.str(v, "subtype")
	if f.err != nil {
		return []Event{newDecodeError(line, fmt.Errorf("decode line: %w", f.err))}
	}
	var evs []Event
	switch typ {
	case "stream_event":
		evs = decodeStreamEvent(&f, v, line)
	case "assistant":
		evs = decodeAssistant(&f, v, line)
	case "user":
		evs = decodeUser(&f, v, line)
	case "system":
		evs = decodeSystem(&f, v, line, subtype)
	case "result":
		evs = []Event{decodeResult(&f, v, line)}
	case "control_request":
		evs = decodeControlRequest(&f, v, line)
	case "control_response":
		evs = []Event{ControlResponse{RequestID: f.str(v, "response", "request_id"), Subtype: f.str(v, "response", "subtype"),
			Error: f.str(v, "response", "error"), ErrorCode: f.str(v, "response", "error_code"), Response: f.raw(v, "response", "response")}}
	case "control_cancel_request":
		evs = []Event{PermissionCancelled{RequestID: f.str(v, "request_id")}}
	case "command_lifecycle":
		evs = []Event{Lifecycle{UUID: f.str(v, "command_uuid"), State: f.str(v, "state")}}
	default:
		evs = []Event{unknown(typ, subtype, line)}
	}
	if f.err != nil {
		de := newDecodeError(line, fmt.Errorf("decode %s line: %w", typ, f.err))
		if typ == "control_request" {
			de.ControlRequestID = ControlRequestID(line)
		}
		return []Event{de}
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
func decodeStreamEvent(f *fields, v jval, line []byte) []Event {
	e := f.get(v, "event")
	parent := f.str(v, "parent_tool_use_id")
	switch et := f.str(e, "type"); et {
	case "content_block_delta":
		switch dt := f.str(e, "delta", "type"); dt {
		case "text_delta":
			return []Event{TextDelta{Text: f.str(e, "delta", "text"), ParentToolUseID: parent}}
		case "thinking_delta":
			return []Event{ThinkingDelta{Text: f.str(e, "delta", "thinking")}}
		case "input_json_delta":
			return []Event{ToolInputDelta{Index: int(f.integer(e, "index")), PartialJSON: f.str(e, "delta", "partial_json"), ParentToolUseID: parent}}
		case "signature_delta", "citations_delta":
			return nil
		default:
			return []Event{unknown("stream_event", "content_block_delta:"+dt, line)}
		}
	case "message_start", "message_delta", "message_stop", "content_block_start", "content_block_stop", "ping":
		// Boundaries and usage: the assistant and result lines carry the
		// same information in complete form.
		return nil
	default:
		return []Event{unknown("stream_event", et, line)}
	}
}

// decodeAssistant handles type:"assistant": one event per content block.
func decodeAssistant(f *fields, v jval, line []byte) []Event {
	id := f.str(v, "message", "id")
	parent := f.str(v, "parent_tool_use_id")
	blocks := f.array(v, "message", "content")
	evs := make([]Event, 0, len(blocks))
	for _, b := range blocks {
		switch bt := f.str(b, "type"); bt {
		case "text":
			evs = append(evs, AssistantText{MessageID: id, Text: f.str(b, "text"), ParentToolUseID: parent})
		case "tool_use", "server_tool_use":
			evs = append(evs, ToolUse{ID: f.str(b, "id"), Name: f.str(b, "name"), Input: f.raw(b, "input"), ParentToolUseID: parent})
		case "thinking", "redacted_thinking":
			// Already streamed as ThinkingDelta; nothing to render twice.
		default:
			evs = append(evs, unknown("assistant", "block:"+bt, line))
		}
	}
	return evs
}

// decodeUser handles type:"user" lines printed by the CLI.
func decodeUser(f *fields, v jval, line []byte) []Event {
	uuid, parent, replay := f.str(v, "uuid"), f.str(v, "parent_tool_use_id"), f.boolean(v, "isReplay")
	content := f.get(v, "message", "content")
	if content == nil {
		return nil
	}
	if content.kind() == '"' {
		return []Event{UserText{UUID: uuid, Text: f.str(content), ParentToolUseID: parent, Replay: replay}}
	}
	blocks := f.array(content)
	evs := make([]Event, 0, len(blocks))
	for _, b := range blocks {
		switch bt := f.str(b, "type"); bt {
		case "tool_result":
			evs = append(evs, ToolResult{ToolUseID: f.str(b, "tool_use_id"), IsError: f.boolean(b, "is_error"),
				Content: flattenToolContent(f, f.get(b, "content")), ParentToolUseID: parent})
		case "text":
			evs = append(evs, UserText{UUID: uuid, Text: f.str(b, "text"), ParentToolUseID: parent, Replay: replay})
		case "image", "document":
			// Host-sent attachments echoed back; nothing to show.
		default:
			evs = append(evs, unknown("user", "block:"+bt, line))
		}
	}
	return evs
}

// flattenToolContent turns a tool_result content (string, or an array of
// blocks) into text: text blocks joined by newlines, other blocks as
// "[type]".
func flattenToolContent(f *fields, c jval) string {
	if c == nil {
		return ""
	}
	if c.kind() == '"' {
		return f.str(c)
	}
	blocks := f.array(c)
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if t := f.str(b, "type"); t == "text" {
			parts = append(parts, f.str(b, "text"))
		} else {
			parts = append(parts, "["+t+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// rawText returns a JSON string's value, or the JSON of anything else ("" for
// absent or null).
func rawText(f *fields, v jval) string {
	switch v.kind() {
	case 0, 'n':
		return ""
	case '"':
		return f.str(v)
	}
	return string(v)
}

// decodeSystem handles type:"system" lines by subtype.
func decodeSystem(f *fields, v jval, line []byte, subtype string) []Event {
	var ev Event
	switch subtype {
	case "init":
		ev = Init{SessionID: f.str(v, "session_id"), Model: f.str(v, "model"), PermissionMode: f.str(v, "permissionMode"),
			Tools: f.strs(v, "tools"), CWD: f.str(v, "cwd"), Version: f.str(v, "claude_code_version"), Raw: bytes.Clone(line)}
	case "status":
		ev = StatusChange{Status: f.str(v, "status"), PermissionMode: f.str(v, "permissionMode"), UserMessageUUIDs: f.strs(v, "user_message_uuids")}
	case "task_started":
		ev = TaskStarted{TaskID: f.str(v, "task_id"), TaskType: f.str(v, "task_type"), Description: f.str(v, "description"),
			ToolUseID: f.str(v, "tool_use_id"), Background: f.boolean(v, "is_backgrounded")}
	case "task_updated":
		patch := f.raw(v, "patch")
		status := ""
		if p := f.get(v, "patch"); p.kind() == '{' {
			status = f.str(p, "status")
		}
		ev = TaskUpdated{TaskID: f.str(v, "task_id"), Status: status, Patch: patch}
	case "task_progress":
		ev = TaskProgress{TaskID: f.str(v, "task_id"), ToolUseID: f.str(v, "tool_use_id"), Description: f.str(v, "description"),
			LastToolName: f.str(v, "last_tool_name")}
	case "task_notification":
		ev = TaskNotification{TaskID: f.str(v, "task_id"), Status: f.str(v, "status"), Summary: f.str(v, "summary"),
			OutputFile: f.str(v, "output_file"), ToolUseID: f.str(v, "tool_use_id")}
	case "background_tasks_changed":
		list := f.array(v, "tasks")
		tasks := make([]BackgroundTask, 0, len(list))
		for _, t := range list {
			tasks = append(tasks, BackgroundTask{TaskID: f.str(t, "task_id"), TaskType: f.str(t, "task_type"), Description: f.str(t, "description")})
		}
		ev = BackgroundTasks{Tasks: tasks}
	case "api_retry":
		ev = APIRetry{Attempt: int(f.integer(v, "attempt")), MaxRetries: int(f.integer(v, "max_retries")),
			Delay:  time.Duration(f.float(v, "retry_delay_ms") * float64(time.Millisecond)),
			Status: int(f.integer(v, "error_status")), Error: rawText(f, f.get(v, "error"))}
	case "permission_denied":
		ev = PermissionDenied{ToolName: f.str(v, "tool_name"), ToolUseID: f.str(v, "tool_use_id"), Message: f.str(v, "message"),
			DecisionReason: f.str(v, "decision_reason"), ReasonType: f.str(v, "decision_reason_type")}
	case "informational":
		ev = Notice{Level: f.str(v, "level"), Tag: f.str(v, "tag"), Text: rawText(f, f.get(v, "content"))}
	default:
		return []Event{unknown("system", subtype, line)}
	}
	return []Event{ev}
}

// decodeResult handles type:"result".
func decodeResult(f *fields, v jval, line []byte) Result {
	r := Result{
		Subtype: f.str(v, "subtype"), IsError: f.boolean(v, "is_error"), Text: f.str(v, "result"), SessionID: f.str(v, "session_id"),
		NumTurns: int(f.integer(v, "num_turns")), Duration: time.Duration(f.float(v, "duration_ms") * float64(time.Millisecond)),
		CostUSD: f.float(v, "total_cost_usd"),
		Usage: Usage{
			InputTokens: f.integer(v, "usage", "input_tokens"), OutputTokens: f.integer(v, "usage", "output_tokens"),
			CacheCreationInputTokens: f.integer(v, "usage", "cache_creation_input_tokens"),
			CacheReadInputTokens:     f.integer(v, "usage", "cache_read_input_tokens"),
		},
		StopReason: f.str(v, "stop_reason"), TerminalReason: f.str(v, "terminal_reason"),
		APIErrorStatus: int(f.integer(v, "api_error_status")), UUID: f.str(v, "uuid"), Raw: bytes.Clone(line),
	}
	for _, e := range f.array(v, "errors") {
		r.Errors = append(r.Errors, rawText(f, e))
	}
	decodeResultBinding(f, v, &r)
	if o := f.get(v, "origin"); o != nil {
		if o.kind() == '{' {
			r.Origin = f.str(o, "kind")
			if r.Origin == "" {
				r.Origin = "unknown"
			}
		} else {
			r.Origin = rawText(f, o)
		}
	}
	return r
}

// decodeResultBinding reads result_index and user_message_uuid(s). They
// are optional and read leniently: a value of another type (a later CLI
// changing them) is ignored rather than making the result undecodable,
// which would lose the turn's end.
func decodeResultBinding(f *fields, v jval, r *Result) {
	if iv := f.get(v, "result_index"); iv.kind() == '0' {
		if n, err := strconv.ParseInt(string(iv), 10, 32); err == nil && n >= 0 {
			r.Index, r.Indexed = int(n), true
		}
	}
	if u := f.get(v, "user_message_uuid"); u.kind() == '"' {
		r.UserMessageUUID = unescape(u[1 : len(u)-1])
	}
	if a := f.get(v, "user_message_uuids"); a.kind() == '[' {
		for _, e := range elements(a, nil, f.index.sk) {
			if e.kind() == '"' {
				r.UserMessageUUIDs = append(r.UserMessageUUIDs, unescape(e[1:len(e)-1]))
			}
		}
	}
}

// decodeControlRequest handles type:"control_request" from the CLI.
func decodeControlRequest(f *fields, v jval, line []byte) []Event {
	id := f.str(v, "request_id")
	r := f.get(v, "request")
	switch st := f.str(r, "subtype"); st {
	case "can_use_tool":
		p := PermissionRequest{
			RequestID: id, ToolName: f.str(r, "tool_name"), DisplayName: f.str(r, "display_name"),
			Input: f.raw(r, "input"), Description: f.str(r, "description"), BlockedPath: f.str(r, "blocked_path"),
			DecisionReason: f.str(r, "decision_reason"), DecisionReasonType: f.str(r, "decision_reason_type"),
			ToolUseID: f.str(r, "tool_use_id"), AgentID: f.str(r, "agent_id"),
			RequiresUserInteraction: f.boolean(r, "requires_user_interaction"), Raw: bytes.Clone(line),
		}
		for _, s := range f.array(r, "permission_suggestions") {
			p.Suggestions = append(p.Suggestions, bytes.Clone(s))
		}
		return []Event{p}
	case "hook_callback":
		return []Event{HookCallback{RequestID: id, CallbackID: f.str(r, "callback_id"), ToolUseID: f.str(r, "tool_use_id"), Input: f.raw(r, "input")}}
	case "mcp_message":
		return []Event{MCPMessage{RequestID: id, Server: f.str(r, "server_name"), Message: f.raw(r, "message")}}
	case "elicitation":
		e := Elicitation{RequestID: id, Server: f.str(r, "mcp_server_name"), Message: f.str(r, "message"), Mode: f.str(r, "mode"),
			URL: f.str(r, "url"), ElicitationID: f.str(r, "elicitation_id"), Schema: f.raw(r, "requested_schema"),
			Title: f.str(r, "title"), DisplayName: f.str(r, "display_name"), Description: f.str(r, "description")}
		for _, p := range f.array(r, "property_order") {
			e.PropertyOrder = append(e.PropertyOrder, f.str(p))
		}
		return []Event{e}
	default:
		return []Event{unknown("control_request", st, line)}
	}
}

// ControlRequestID returns the request_id of an Unknown control_request
// line, so the session can refuse it instead of leaving the CLI waiting.
func ControlRequestID(raw []byte) string {
	if !validJSON(raw) || jval(raw).kind() != '{' {
		return ""
	}
	f := fields{index: &objIndexes{}}
	return f.str(jval(raw), "request_id")
}
