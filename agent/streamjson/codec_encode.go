package streamjson

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A malformed stdin line kills the CLI, so every line the host writes is
// marshalled here from the typed structs in wire.go, and nowhere else.
// Each encoder returns one complete line including its trailing newline.

// defaultDenyMessage is sent when a deny Decision carries no Message: the CLI
// turns a deny without a message into an "invalid permission result" error.
const defaultDenyMessage = "Permission denied by the host."

// marshalLine marshals v and appends the newline. HTML escaping is off so
// prompts containing <, > and & reach the CLI unchanged (both forms are
// valid JSON).
func marshalLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends '\n'
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeUserMessage encodes a user message. Text-only messages use a string
// content; messages with images use an array of blocks: the text first (if
// any), then the images in order.
func EncodeUserMessage(m UserMessage) ([]byte, error) {
	if m.UUID == "" {
		return nil, fmt.Errorf("encode user message: empty uuid")
	}
	var content any = m.Text
	if len(m.Images) > 0 {
		blocks := make([]wireBlockOut, 0, len(m.Images)+1)
		if m.Text != "" {
			blocks = append(blocks, wireBlockOut{Type: "text", Text: m.Text})
		}
		for i, img := range m.Images {
			if img.MediaType == "" || len(img.Data) == 0 {
				return nil, fmt.Errorf("encode user message %s: image %d has no media type or data", m.UUID, i)
			}
			blocks = append(blocks, wireBlockOut{Type: "image", Source: &wireImageSrcOut{Type: "base64", MediaType: img.MediaType, Data: img.Data}})
		}
		content = blocks
	}
	line, err := marshalLine(wireUserMessageOut{
		Type:    "user",
		Message: wireUserContentOut{Role: "user", Content: content},
		UUID:    m.UUID,
	})
	if err != nil {
		return nil, fmt.Errorf("encode user message %s: %w", m.UUID, err)
	}
	return line, nil
}

// EncodePermission encodes the answer to a can_use_tool request. original is
// the request's input, sent as updatedInput when d.UpdatedInput is nil.
func EncodePermission(requestID string, original json.RawMessage, d Decision) ([]byte, error) {
	var payload any
	if d.Allow {
		in := d.UpdatedInput
		if len(bytes.TrimSpace(in)) == 0 {
			in = original
		}
		if len(bytes.TrimSpace(in)) == 0 || bytes.Equal(bytes.TrimSpace(in), []byte("null")) {
			in = json.RawMessage("{}")
		}
		if !json.Valid(in) {
			return nil, fmt.Errorf("encode permission %s: updated input is not valid JSON", requestID)
		}
		for i, p := range d.UpdatedPermissions {
			if !json.Valid(p) {
				return nil, fmt.Errorf("encode permission %s: updated permission %d is not valid JSON", requestID, i)
			}
		}
		payload = wirePermissionAllow{Behavior: "allow", UpdatedInput: in, UpdatedPermissions: d.UpdatedPermissions}
	} else {
		msg := d.Message
		if msg == "" {
			msg = defaultDenyMessage
		}
		payload = wirePermissionDeny{Behavior: "deny", Message: msg, Interrupt: d.Interrupt}
	}
	return EncodeControlSuccess(requestID, payload)
}

// EncodeControlSuccess encodes a success control_response carrying payload.
func EncodeControlSuccess(requestID string, payload any) ([]byte, error) {
	line, err := marshalLine(wireControlResponseOut{
		Type:     "control_response",
		Response: wireControlResponseBodyOut{Subtype: "success", RequestID: requestID, Response: payload},
	})
	if err != nil {
		return nil, fmt.Errorf("encode control response %s: %w", requestID, err)
	}
	return line, nil
}

// EncodeControlError encodes an error control_response: for a permission
// request the tool result becomes "Tool permission request failed: msg" and
// the turn continues.
func EncodeControlError(requestID, msg string) ([]byte, error) {
	line, err := marshalLine(wireControlResponseOut{
		Type:     "control_response",
		Response: wireControlResponseBodyOut{Subtype: "error", RequestID: requestID, Error: msg},
	})
	if err != nil {
		return nil, fmt.Errorf("encode control error %s: %w", requestID, err)
	}
	return line, nil
}

// EncodeControlRequest encodes a host control_request with the given
// payload (one of the wire*Out request types).
func EncodeControlRequest(requestID string, request any) ([]byte, error) {
	line, err := marshalLine(wireControlRequestOut{Type: "control_request", RequestID: requestID, Request: request})
	if err != nil {
		return nil, fmt.Errorf("encode control request %s: %w", requestID, err)
	}
	return line, nil
}

func EncodeInterrupt(requestID string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireInterruptOut{Subtype: "interrupt"})
}

func EncodeSetModel(requestID, model string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireSetModelOut{Subtype: "set_model", Model: model})
}

func EncodeSetPermissionMode(requestID, mode string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireSetPermissionModeOut{Subtype: "set_permission_mode", Mode: mode})
}

// EncodeInitialize encodes the initialize control request. sdkMCPServers
// names the host's in-process MCP servers (declared with --mcp-config
// type "sdk"): the CLI connects to them only once they are listed here.
func EncodeInitialize(requestID, appendSystemPrompt string, sdkMCPServers ...string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireInitializeOut{Subtype: "initialize", AppendSystemPrompt: appendSystemPrompt,
		SDKMCPServers: sdkMCPServers})
}

// EncodeMCPResponse answers an mcp_message control request with the
// JSON-RPC response resp (nil: the message was a notification, answered
// with null).
func EncodeMCPResponse(requestID string, resp json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(resp)) == 0 {
		resp = json.RawMessage("null")
	}
	if !json.Valid(resp) {
		return nil, fmt.Errorf("encode mcp response %s: not valid JSON", requestID)
	}
	return EncodeControlSuccess(requestID, wireMCPResponseOut{MCPResponse: resp})
}

// EncodeContextUsage asks for the context usage summary (local
// estimates: no API call).
func EncodeContextUsage(requestID string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireContextUsageOut{Subtype: "get_context_usage", Detail: "summary"})
}

// EncodeSetEnv sets environment variables of the CLI process through its
// flag settings (apply_flag_settings): the next API request is made with
// them. An empty value makes the variable count as unset.
func EncodeSetEnv(requestID string, env map[string]string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireApplyFlagSettingsOut{Subtype: "apply_flag_settings", Settings: wireFlagSettings{Env: env}})
}

// EncodeRewind rewinds the conversation to before the user message
// messageUUID: it and everything after it leave the conversation (a later
// --resume does not restore them).
func EncodeRewind(requestID, messageUUID string) ([]byte, error) {
	return EncodeControlRequest(requestID, wireRewindOut{Subtype: "rewind_conversation", TargetMessageUUID: messageUUID})
}

// wireElicitationResult is the answer to an elicitation request.
type wireElicitationResult struct {
	Action  string `json:"action"`
	Content any    `json:"content,omitempty"` // nil (omitted) unless accept
}

// EncodeElicitationResponse answers elicitation request requestID with
// action (ElicitAccept with content, the form's values by property name;
// ElicitDecline or ElicitCancel without): the CLI passes it to the MCP
// server as the elicitation/create result. Any other action is refused.
func EncodeElicitationResponse(requestID, action string, content map[string]any) ([]byte, error) {
	r := wireElicitationResult{Action: action}
	switch action {
	case ElicitAccept:
		if content == nil {
			content = map[string]any{}
		}
		r.Content = content
	case ElicitDecline, ElicitCancel:
	default:
		return nil, fmt.Errorf("encode elicitation response %s: unknown action %q", requestID, action)
	}
	return EncodeControlSuccess(requestID, r)
}
