package streamjson

import "encoding/json"

// This file holds the stream-json shapes the host writes to the CLI's
// stdin, marshalled by the encode* functions only. Field names follow the
// captures in shared/protocol. (Lines the CLI prints are read field by
// field in codec_decode.go.)

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
	wireContextUsageOut struct {
		Subtype string `json:"subtype"` // "get_context_usage"
		Detail  string `json:"detail"`  // "summary": local estimates, no token-count API calls
	}
	wireApplyFlagSettingsOut struct {
		Subtype  string           `json:"subtype"` // "apply_flag_settings"
		Settings wireFlagSettings `json:"settings"`
	}
	wireFlagSettings struct {
		Env map[string]string `json:"env"` // applied to the CLI's process environment at once
	}
	wireRewindOut struct {
		Subtype           string `json:"subtype"`             // "rewind_conversation"
		TargetMessageUUID string `json:"target_message_uuid"` // the user message to rewind to (it is dropped, with all after it)
	}
)

// wireMCPResponseOut is the success payload answering an mcp_message:
// the JSON-RPC response, or null for a notification.
type wireMCPResponseOut struct {
	MCPResponse json.RawMessage `json:"mcp_response"`
}

// wireEmpty is the empty success payload ({}), used to answer hook callbacks.
type wireEmpty struct{}
