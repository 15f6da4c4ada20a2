package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// Usage is the token accounting the fake reports.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Event is one server-sent event of a streamed Messages API response.
// Pause marks events the server waits Reply.Delay before sending.
type Event struct {
	Name  string // SSE "event:" line, equal to the payload's "type"
	Data  any    // payload, marshalled to the "data:" line
	Pause bool
}

// wire payloads, as typed structs so the JSON field order is stable.
type (
	wireUsage struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	}
	wireMessage struct {
		ID           string    `json:"id"`
		Type         string    `json:"type"`
		Role         string    `json:"role"`
		Model        string    `json:"model"`
		Content      []any     `json:"content"`
		StopReason   *string   `json:"stop_reason"`
		StopSequence *string   `json:"stop_sequence"`
		Usage        wireUsage `json:"usage"`
	}
	wireText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	wireToolUse struct {
		Type  string         `json:"type"`
		ID    string         `json:"id"`
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
	}
	messageStartEvent struct {
		Type    string      `json:"type"`
		Message wireMessage `json:"message"`
	}
	pingEvent struct {
		Type string `json:"type"`
	}
	contentBlockStartEvent struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}
	textDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	inputJSONDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
	contentBlockDeltaEvent struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta any    `json:"delta"`
	}
	contentBlockStopEvent struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	messageDelta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	outputUsage struct {
		OutputTokens int `json:"output_tokens"`
	}
	messageDeltaEvent struct {
		Type  string       `json:"type"`
		Delta messageDelta `json:"delta"`
		Usage outputUsage  `json:"usage"`
	}
	messageStopEvent struct {
		Type string `json:"type"`
	}
	wireErrorBody struct {
		Type      string    `json:"type"`
		Error     wireError `json:"error"`
		RequestID string    `json:"request_id,omitempty"`
	}
	wireError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
)

// StreamEvents returns the SSE events of a streamed answer, in the order the
// Messages API sends them: message_start, ping, then per block
// content_block_start / content_block_delta… / content_block_stop, then
// message_delta (stop_reason, output usage) and message_stop. Text blocks
// are cut into r.Chunks text_delta events (automatic when 0); tool inputs
// arrive as input_json_delta fragments of the marshalled input.
func StreamEvents(msgID, model string, r Reply, u Usage) []Event {
	events := []Event{
		{Name: "message_start", Data: messageStartEvent{Type: "message_start", Message: wireMessage{
			ID: msgID, Type: "message", Role: "assistant", Model: model, Content: []any{},
			Usage: wireUsage{InputTokens: u.InputTokens, OutputTokens: 1},
		}}},
		{Name: "ping", Data: pingEvent{Type: "ping"}},
	}
	first := true
	for i, b := range r.Blocks {
		switch b.Type {
		case "tool_use":
			events = append(events, Event{Name: "content_block_start", Data: contentBlockStartEvent{
				Type: "content_block_start", Index: i,
				ContentBlock: wireToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: map[string]any{}},
			}})
			for _, part := range splitRunes(string(mustJSON(b.Input)), 2, false) {
				events = append(events, Event{Name: "content_block_delta", Data: contentBlockDeltaEvent{
					Type: "content_block_delta", Index: i, Delta: inputJSONDelta{Type: "input_json_delta", PartialJSON: part},
				}})
			}
		default:
			events = append(events, Event{Name: "content_block_start", Data: contentBlockStartEvent{
				Type: "content_block_start", Index: i, ContentBlock: wireText{Type: "text", Text: ""},
			}})
			for _, part := range splitRunes(b.Text, textChunks(b.Text, r.Chunks), r.Chunks > 0) {
				events = append(events, Event{Name: "content_block_delta", Pause: !first, Data: contentBlockDeltaEvent{
					Type: "content_block_delta", Index: i, Delta: textDelta{Type: "text_delta", Text: part},
				}})
				first = false
			}
		}
		events = append(events, Event{Name: "content_block_stop", Data: contentBlockStopEvent{Type: "content_block_stop", Index: i}})
	}
	events = append(events,
		Event{Name: "message_delta", Data: messageDeltaEvent{
			Type: "message_delta", Delta: messageDelta{StopReason: r.StopReason}, Usage: outputUsage{OutputTokens: u.OutputTokens},
		}},
		Event{Name: "message_stop", Data: messageStopEvent{Type: "message_stop"}},
	)
	return events
}

// MessageJSON returns the body of a non-streaming answer: one complete
// message object.
func MessageJSON(msgID, model string, r Reply, u Usage) []byte {
	content := make([]any, 0, len(r.Blocks))
	for _, b := range r.Blocks {
		if b.Type == "tool_use" {
			content = append(content, wireToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: b.Input})
		} else {
			content = append(content, wireText{Type: "text", Text: b.Text})
		}
	}
	stop := r.StopReason
	return mustJSON(wireMessage{
		ID: msgID, Type: "message", Role: "assistant", Model: model, Content: content, StopReason: &stop,
		Usage: wireUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens},
	})
}

// ErrorJSON returns Anthropic's error body:
// {"type":"error","error":{"type":T,"message":M},"request_id":R}.
func ErrorJSON(errType, message, requestID string) []byte {
	return mustJSON(wireErrorBody{Type: "error", Error: wireError{Type: errType, Message: message}, RequestID: requestID})
}

// WriteEvent writes one SSE event: "event: NAME\ndata: JSON\n\n".
func WriteEvent(w io.Writer, e Event) error {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("marshal %s event: %w", e.Name, err)
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Name, data); err != nil {
		return fmt.Errorf("write %s event: %w", e.Name, err)
	}
	return nil
}

// textChunks picks how many deltas a text is streamed in: want when set,
// otherwise 2 for short texts and one per ~200 characters for long ones.
func textChunks(text string, want int) int {
	if want > 0 {
		return want
	}
	return max(2, utf8.RuneCountInString(text)/200)
}

// splitRunes cuts s into n pieces of nearly equal rune counts. With pad,
// a text shorter than n runes is padded with '.' so there are exactly n
// non-empty pieces; without it, fewer pieces are returned. An empty s
// without pad yields one empty piece.
func splitRunes(s string, n int, pad bool) []string {
	runes := []rune(s)
	if pad {
		for len(runes) < n {
			runes = append(runes, '.')
		}
	}
	n = max(1, min(n, len(runes)))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(runes[len(runes)*i/n:len(runes)*(i+1)/n]))
	}
	return out
}

// mustJSON marshals values built from strings, numbers, bools, maps and
// slices, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: marshal %T: %v", v, err))
	}
	return b
}
