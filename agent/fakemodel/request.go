package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Request is one HTTP request the fake received, recorded in arrival order.
//
// For Messages API calls (POST /v1/messages and /v1/messages/count_tokens) the
// JSON body is decoded into Model, Stream, MaxTokens, System, Messages and
// Tools; for any other path only the raw fields are set. Secret headers
// (x-api-key, authorization) are never recorded.
type Request struct {
	Time     time.Time
	Method   string
	Path     string // URL path without the query, e.g. "/v1/messages"
	RawQuery string // e.g. "beta=true"
	Header   http.Header
	Body     []byte // raw request body

	Model     string
	Stream    bool
	MaxTokens int
	System    string // all system text blocks joined with "\n"
	Messages  []Message
	Tools     []string // tool names offered to the model, in order

	// Filled in after the fake answered.
	Status int    // HTTP status sent
	Script string // which script answered (e.g. "pong", "bash", "tool-result", "error", "not-found")
	Reply  string // the text the fake answered with (text blocks joined), for debugging
}

// Message is one entry of the request's "messages" array with its content
// flattened to blocks. A string content becomes a single text block.
// Besides "user" and "assistant" the CLI also sends role "system" messages.
type Message struct {
	Role   string
	Blocks []Block
}

// Block is one content block, flattened.
//
//   - text: Text
//   - tool_use: ID, Name, Input
//   - tool_result: ToolUseID, Text (string content, or its text blocks joined
//     with "\n"), IsError
//   - anything else (image, thinking, ...): Type only, plus Text when the
//     block carries a "text" or "thinking" field.
type Block struct {
	Type      string
	Text      string
	ID        string
	Name      string
	Input     json.RawMessage
	ToolUseID string
	IsError   bool
}

// IsMessages reports whether r is a Messages API generation call
// (POST /v1/messages), as opposed to count_tokens or an unknown endpoint.
func (r Request) IsMessages() bool {
	return r.Method == http.MethodPost && r.Path == "/v1/messages"
}

// wireRequest is the part of a Messages API request body the fake reads.
type wireRequest struct {
	Model     string          `json:"model"`
	Stream    bool            `json:"stream"`
	MaxTokens int             `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// wireBlock is any content block as sent on the wire.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// parseBody decodes a Messages API body into r's typed fields.
func (r *Request) parseBody() error {
	var w wireRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return fmt.Errorf("decode messages request body: %w", err)
	}
	r.Model, r.Stream, r.MaxTokens = w.Model, w.Stream, w.MaxTokens
	system, err := flattenContent(w.System)
	if err != nil {
		return fmt.Errorf("decode system: %w", err)
	}
	r.System = joinTexts(system)
	for i, m := range w.Messages {
		blocks, err := flattenContent(m.Content)
		if err != nil {
			return fmt.Errorf("decode messages[%d] content: %w", i, err)
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Blocks: blocks})
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	return nil
}

// flattenContent turns a content value (a string, an array of blocks, or
// absent) into blocks.
func flattenContent(raw json.RawMessage) ([]Block, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []Block{{Type: "text", Text: s}}, nil
	}
	var wire []wireBlock
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, err
	}
	blocks := make([]Block, 0, len(wire))
	for _, w := range wire {
		b := Block{Type: w.Type, Text: w.Text, ID: w.ID, Name: w.Name, Input: w.Input, ToolUseID: w.ToolUseID, IsError: w.IsError}
		switch w.Type {
		case "tool_result":
			inner, err := flattenContent(w.Content)
			if err != nil {
				return nil, fmt.Errorf("tool_result %s content: %w", w.ToolUseID, err)
			}
			b.Text = joinTexts(inner)
		case "thinking":
			b.Text = w.Thinking
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// joinTexts joins the Text of all text blocks with "\n".
func joinTexts(blocks []Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// redactHeaders copies h without credentials.
func redactHeaders(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"X-Api-Key", "Authorization", "Proxy-Authorization", "Cookie"} {
		if out.Get(k) != "" {
			out.Set(k, "[redacted]")
		}
	}
	return out
}
