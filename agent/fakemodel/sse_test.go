package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Name string
	Data map[string]any
}

// parseSSE reads a complete SSE stream; it fails on lines that are neither
// "event:", "data:" nor blank, and on events without both lines.
func parseSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var data string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "":
			if cur.Name == "" || data == "" {
				t.Fatalf("incomplete event before blank line: %+v data=%q", cur, data)
			}
			if err := json.Unmarshal([]byte(data), &cur.Data); err != nil {
				t.Fatalf("event %s: bad data %q: %v", cur.Name, data, err)
			}
			if cur.Data["type"] != cur.Name {
				t.Fatalf("event name %q != data type %v", cur.Name, cur.Data["type"])
			}
			out = append(out, cur)
			cur, data = sseEvent{}, ""
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur.Name != "" || data != "" {
		t.Fatalf("stream ended mid-event")
	}
	return out
}

// assembled is what a client rebuilds from a stream.
type assembled struct {
	Names      []string
	Blocks     []map[string]any // text: {"type","text"}; tool_use: {"type","id","name","input"}
	StopReason string
	InTokens   float64
	OutTokens  float64
}

// assemble rebuilds the message a client sees from parsed events,
// checking the index discipline of content blocks.
func assemble(t *testing.T, events []sseEvent) assembled {
	t.Helper()
	var a assembled
	partial := map[int]string{}
	open := -1
	for _, e := range events {
		a.Names = append(a.Names, e.Name)
		switch e.Name {
		case "message_start":
			msg := e.Data["message"].(map[string]any)
			a.InTokens = msg["usage"].(map[string]any)["input_tokens"].(float64)
		case "content_block_start":
			idx := int(e.Data["index"].(float64))
			if open != -1 || idx != len(a.Blocks) {
				t.Fatalf("content_block_start index %d while block %d open, %d done", idx, open, len(a.Blocks))
			}
			open = idx
			a.Blocks = append(a.Blocks, e.Data["content_block"].(map[string]any))
		case "content_block_delta":
			idx := int(e.Data["index"].(float64))
			if idx != open {
				t.Fatalf("delta for block %d while %d open", idx, open)
			}
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				a.Blocks[idx]["text"] = a.Blocks[idx]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[idx] += d["partial_json"].(string)
			default:
				t.Fatalf("unknown delta %v", d["type"])
			}
		case "content_block_stop":
			idx := int(e.Data["index"].(float64))
			if idx != open {
				t.Fatalf("stop for block %d while %d open", idx, open)
			}
			if js, ok := partial[idx]; ok {
				var in map[string]any
				if err := json.Unmarshal([]byte(js), &in); err != nil {
					t.Fatalf("tool input JSON %q: %v", js, err)
				}
				a.Blocks[idx]["input"] = in
			}
			open = -1
		case "message_delta":
			a.StopReason = e.Data["delta"].(map[string]any)["stop_reason"].(string)
			a.OutTokens = e.Data["usage"].(map[string]any)["output_tokens"].(float64)
		}
	}
	return a
}

func TestStreamEvents(t *testing.T) {
	tool := ReplyBlock{Type: "tool_use", ID: "toolu_fake_007", Name: "Bash", Input: map[string]any{"command": "echo ü", "description": "d"}}
	tests := []struct {
		name       string
		reply      Reply
		wantNames  []string
		wantBlocks []map[string]any
		wantDeltas int // text deltas
	}{
		{
			name:       "text",
			reply:      textReply("pong", "pong: hello"),
			wantNames:  []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			wantBlocks: []map[string]any{{"type": "text", "text": "pong: hello"}},
			wantDeltas: 2,
		},
		{
			name:  "text then tool_use",
			reply: Reply{Blocks: []ReplyBlock{{Type: "text", Text: "Running."}, tool}, StopReason: "tool_use"},
			wantNames: []string{"message_start", "ping",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
				"message_delta", "message_stop"},
			wantBlocks: []map[string]any{
				{"type": "text", "text": "Running."},
				{"type": "tool_use", "id": "toolu_fake_007", "name": "Bash", "input": map[string]any{"command": "echo ü", "description": "d"}},
			},
			wantDeltas: 2,
		},
		{
			name:       "slow chunks pad short text",
			reply:      Reply{Blocks: []ReplyBlock{{Type: "text", Text: "abc"}}, StopReason: "end_turn", Chunks: 5},
			wantBlocks: []map[string]any{{"type": "text", "text": "abc.."}},
			wantDeltas: 5,
		},
		{
			name:       "slow chunks",
			reply:      Reply{Blocks: []ReplyBlock{{Type: "text", Text: "pong: [slow 4] hi"}}, StopReason: "end_turn", Chunks: 4},
			wantBlocks: []map[string]any{{"type": "text", "text": "pong: [slow 4] hi"}},
			wantDeltas: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			events := StreamEvents("msg_fake_1", "claude-x", tc.reply, Usage{InputTokens: 42, OutputTokens: 7})
			pauses := 0
			for _, e := range events {
				if err := WriteEvent(&buf, e); err != nil {
					t.Fatal(err)
				}
				if e.Pause {
					pauses++
				}
			}
			a := assemble(t, parseSSE(t, &buf))
			if tc.wantNames != nil && !reflect.DeepEqual(a.Names, tc.wantNames) {
				t.Errorf("events\n got %v\nwant %v", a.Names, tc.wantNames)
			}
			if !reflect.DeepEqual(a.Blocks, tc.wantBlocks) {
				t.Errorf("blocks\n got %v\nwant %v", a.Blocks, tc.wantBlocks)
			}
			if want := tc.reply.StopReason; a.StopReason != want {
				t.Errorf("stop_reason %q, want %q", a.StopReason, want)
			}
			if a.InTokens != 42 || a.OutTokens != 7 {
				t.Errorf("usage in=%v out=%v, want 42/7", a.InTokens, a.OutTokens)
			}
			deltas := 0
			for _, e := range events {
				if d, ok := e.Data.(contentBlockDeltaEvent); ok {
					if _, ok := d.Delta.(textDelta); ok {
						deltas++
					}
				}
			}
			if deltas != tc.wantDeltas {
				t.Errorf("%d text deltas, want %d", deltas, tc.wantDeltas)
			}
			if pauses != tc.wantDeltas-1 {
				t.Errorf("%d pauses, want one between consecutive text deltas (%d)", pauses, tc.wantDeltas-1)
			}
		})
	}
}

func TestWriteEventFormat(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteEvent(&buf, Event{Name: "ping", Data: pingEvent{Type: "ping"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "event: ping\ndata: {\"type\":\"ping\"}\n\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestMessageJSON(t *testing.T) {
	r := Reply{Blocks: []ReplyBlock{{Type: "text", Text: "hi"}, {Type: "tool_use", ID: "toolu_fake_001", Name: "Write", Input: map[string]any{"file_path": "/a", "content": "b"}}}, StopReason: "tool_use"}
	var got map[string]any
	if err := json.Unmarshal(MessageJSON("msg_1", "m", r, Usage{InputTokens: 3, OutputTokens: 4}), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
		"content": []any{
			map[string]any{"type": "text", "text": "hi"},
			map[string]any{"type": "tool_use", "id": "toolu_fake_001", "name": "Write", "input": map[string]any{"file_path": "/a", "content": "b"}},
		},
		"stop_reason": "tool_use", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 3.0, "output_tokens": 4.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 0.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestErrorJSON(t *testing.T) {
	got := string(ErrorJSON("overloaded_error", "busy", "req_1"))
	want := `{"type":"error","error":{"type":"overloaded_error","message":"busy"},"request_id":"req_1"}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSplitRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		pad  bool
		want []string
	}{
		{"abcdef", 2, false, []string{"abc", "def"}},
		{"abcdefg", 3, false, []string{"ab", "cd", "efg"}},
		{"ab", 5, false, []string{"a", "b"}},
		{"ab", 4, true, []string{"a", "b", ".", "."}},
		{"", 2, false, []string{""}},
		{"äöü", 3, false, []string{"ä", "ö", "ü"}},
	}
	for _, tc := range tests {
		t.Run(tc.s, func(t *testing.T) {
			got := splitRunes(tc.s, tc.n, tc.pad)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("splitRunes(%q, %d, %v) = %q, want %q", tc.s, tc.n, tc.pad, got, tc.want)
			}
		})
	}
}
