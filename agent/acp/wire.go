package acp

import (
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the ACP version this client speaks (initialize).
const ProtocolVersion = 1

// JSON-RPC error codes this client answers with.
const (
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// message is any JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method only) or a response (ID with Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (code %d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// line encodes v as one line of the wire.
func line(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // only maps, strings and raw JSON this package built
		panic(fmt.Sprintf("acp: encode: %v", err))
	}
	return append(b, '\n')
}

// request is one line of a request with numeric id.
func request(id int64, method string, params any) []byte {
	return line(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
}

// notification is one line of a notification.
func notification(method string, params any) []byte {
	return line(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// response is one line answering the request with id (verbatim).
func response(id json.RawMessage, result any) []byte {
	return line(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

// errorResponse is one line answering the request with id with an error.
func errorResponse(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return line(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{Code: code, Message: msg}})
}

// contentBlock is an ACP content block (prompts, message chunks, tool
// call content).
type contentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Data     string          `json:"data,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	URI      string          `json:"uri,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// toolCallContent is one item of a tool call's content: a content block,
// a diff or a terminal.
type toolCallContent struct {
	Type    string       `json:"type"` // content | diff | terminal
	Content contentBlock `json:"content"`
	Path    string       `json:"path"`
	NewText string       `json:"newText"`
}

// toolCall is a tool_call or tool_call_update (and the toolCall of a
// permission request): every field but the id may be absent in an update.
type toolCall struct {
	ToolCallID string            `json:"toolCallId"`
	Title      *string           `json:"title"`
	Kind       *string           `json:"kind"`
	Status     *string           `json:"status"`
	Content    []toolCallContent `json:"content"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
	RawInput  json.RawMessage `json:"rawInput"`
	RawOutput json.RawMessage `json:"rawOutput"`
}

// permissionOption is one choice of a permission request.
type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once | allow_always | reject_once | reject_always
}

// Permission option kinds.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)
