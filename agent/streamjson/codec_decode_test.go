package streamjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// transcriptLine is one line of a capture in testdata/transcripts.
type transcriptLine struct {
	T   float64         `json:"t"`
	Dir string          `json:"dir"`
	Msg json.RawMessage `json:"msg"`
}

// loadTranscriptLines returns the CLI→host lines of every capture, keyed by
// file, as the CLI printed them (compact JSON).
func loadTranscriptLines(tb testing.TB) map[string][][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no transcripts in testdata/transcripts (err %v)", err)
	}
	out := map[string][][]byte{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var tl transcriptLine
			if err := json.Unmarshal(sc.Bytes(), &tl); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			if tl.Dir != "cli->host" {
				continue
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], compactJSON(tb, tl.Msg))
		}
		if err := sc.Err(); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		fh.Close()
	}
	return out
}

// compactJSON returns raw without insignificant whitespace (as the CLI
// prints it; the captures were re-serialised with spaces).
func compactJSON(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		tb.Fatalf("compact %.100s: %v", raw, err)
	}
	return buf.Bytes()
}

// TestDecodeAllTranscriptLines decodes every CLI→host line of every capture:
// none may fail and none may be Unknown (every kind the CLI printed is
// modelled). It also checks every kind was seen at least once.
func TestDecodeAllTranscriptLines(t *testing.T) {
	lines := loadTranscriptLines(t)
	seen := map[string]int{}
	total := 0
	for file, ls := range lines {
		for i, l := range ls {
			total++
			for _, ev := range decodeLine(l) {
				switch e := ev.(type) {
				case DecodeError:
					t.Errorf("%s line %d: decode error %v: %.200s", file, i, e.Err, l)
				case Unknown:
					t.Errorf("%s line %d: unknown %s/%s: %.200s", file, i, e.Type, e.Subtype, l)
				}
				seen[fmt.Sprintf("%T", ev)]++
			}
		}
	}
	want := []string{"streamjson.Init", "streamjson.TextDelta", "streamjson.ToolInputDelta", "streamjson.AssistantText", "streamjson.ToolUse",
		"streamjson.ToolResult", "streamjson.UserText", "streamjson.PermissionRequest", "streamjson.PermissionCancelled", "streamjson.Lifecycle",
		"streamjson.TaskStarted", "streamjson.TaskUpdated", "streamjson.TaskProgress", "streamjson.TaskNotification", "streamjson.BackgroundTasks",
		"streamjson.StatusChange", "streamjson.APIRetry", "streamjson.PermissionDenied", "streamjson.Notice", "streamjson.HookCallback",
		"streamjson.ControlResponse", "streamjson.Result", "streamjson.MCPMessage", "streamjson.Elicitation"}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no %s decoded from the transcripts", w)
		}
	}
	if total < 3000 {
		t.Errorf("only %d lines decoded; testdata incomplete?", total)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-28s %d", k, seen[k])
	}
}

// exampleLine returns the msg of the message-examples entry whose key
// matches exactly.
func exampleLine(t *testing.T, key ...string) []byte {
	t.Helper()
	for _, f := range []string{"message-examples.jsonl", "message-examples-extra.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var ex struct {
				Key []*string       `json:"key"`
				Msg json.RawMessage `json:"msg"`
			}
			if err := json.Unmarshal([]byte(l), &ex); err != nil {
				t.Fatal(err)
			}
			if len(ex.Key) != len(key) {
				continue
			}
			match := true
			for i := range key {
				if ex.Key[i] == nil || *ex.Key[i] != key[i] {
					match = false
				}
			}
			if match {
				return compactJSON(t, ex.Msg)
			}
		}
	}
	t.Fatalf("no example with key %q", key)
	return nil
}

// stripRaw clears the Raw fields so expectations can be written literally.
func stripRaw(evs []Event) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		switch e := ev.(type) {
		case Init:
			e.Raw = nil
			ev = e
		case Result:
			e.Raw = nil
			ev = e
		case PermissionRequest:
			e.Raw = nil
			ev = e
		case Unknown:
			e.Raw = nil
			ev = e
		}
		out[i] = ev
	}
	return out
}

func TestDecodeExamples(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		key  []string
		want []Event
	}{
		{[]string{"cli->host", "system", "status"}, []Event{StatusChange{Status: "requesting"}}},
		{[]string{"cli->host", "stream_event", "message_start"}, nil},
		{[]string{"cli->host", "stream_event", "content_block_start"}, nil},
		{[]string{"cli->host", "stream_event", "content_block_stop"}, nil},
		{[]string{"cli->host", "stream_event", "message_delta"}, nil},
		{[]string{"cli->host", "stream_event", "message_stop"}, nil},
		{[]string{"cli->host", "stream_event", "content_block_delta", "text_delta"}, []Event{TextDelta{Text: "pong:"}}},
		{[]string{"cli->host", "stream_event", "content_block_delta", "input_json_delta"},
			[]Event{ToolInputDelta{Index: 1, PartialJSON: `{"command"`}}},
		{[]string{"cli->host", "assistant", "None"},
			[]Event{AssistantText{MessageID: "msg_fake_0e7ff7ddfc1048d9", Text: "pong: hello"}}},
		{[]string{"cli->host", "user", "None", "replay"},
			[]Event{UserText{UUID: "7fd7c559-0ddd-478a-8914-1001b92f12d2", Text: "first: run tool", Replay: true}}},
		{[]string{"cli->host", "user", "None", "tool_result"},
			[]Event{ToolResult{ToolUseID: "toolu_fake_001", Content: "hello"}}},
		{[]string{"cli->host", "user", "None", "text"},
			[]Event{UserText{UUID: "012b415d-95fd-4bf9-bb20-1a77d2838b3b", Text: "[Request interrupted by user]"}}},
		{[]string{"cli->host", "control_cancel_request", "None"},
			[]Event{PermissionCancelled{RequestID: "062eed46-1e9c-48cd-972d-54d0ca996e3f"}}},
		{[]string{"cli->host", "system", "background_tasks_changed"}, []Event{BackgroundTasks{Tasks: []BackgroundTask{}}}},
		{[]string{"cli->host", "control_response", "error"}, []Event{ControlResponse{RequestID: "host-10623573", Subtype: "error",
			Error:     "Cannot set permission mode to bypassPermissions because the session was not launched with --dangerously-skip-permissions",
			ErrorCode: "bypass_not_launched"}}},
		{[]string{"cli->host", "control_response", "success"}, []Event{ControlResponse{RequestID: "08fd9c1f-e6a9-4bf6-bf8a-f7a837fdb882", Subtype: "success",
			Response: json.RawMessage(`{"behavior":"allow","updatedInput":{"command":"touch ran.txt && echo hello","description":"Run the scripted command"}}`)}}},
		{[]string{"cli->host", "system", "task_started"}, []Event{TaskStarted{TaskID: "badtvm9or", TaskType: "local_bash",
			Description: "Run the scripted command", ToolUseID: "toolu_fake_001"}}},
		{[]string{"cli->host", "system", "task_notification"}, []Event{TaskNotification{TaskID: "badtvm9or", Status: "completed",
			Summary: "Run the scripted command", ToolUseID: "toolu_fake_001"}}},
		{[]string{"cli->host", "system", "task_updated"}, []Event{TaskUpdated{TaskID: "b43f5qk5k", Status: "completed",
			Patch: json.RawMessage(`{"status":"completed","end_time":1795298925148}`)}}},
		{[]string{"cli->host", "system", "task_progress"}, []Event{TaskProgress{TaskID: "a39e96bbf4367101b", ToolUseID: "toolu_fake_001",
			Description: "Running Run the scripted command", LastToolName: "Bash"}}},
		{[]string{"cli->host", "command_lifecycle", "queued"}, []Event{Lifecycle{UUID: "aaef696d-4d66-4374-b2de-909030f00846", State: LifecycleQueued}}},
		{[]string{"cli->host", "command_lifecycle", "completed"}, []Event{Lifecycle{UUID: "0ef9ac7f-c188-4afb-bc44-45264d0f28fb", State: LifecycleCompleted}}},
		{[]string{"cli->host", "system", "permission_denied"}, []Event{PermissionDenied{ToolName: "Bash", ToolUseID: "toolu_fake_001",
			Message: "touch in '/srv/project/ran.txt' needs approval. The path is inside the working directories for this session ('/srv/project'), and Claude Code asks before a shell command creates, changes or removes files there."}}},
		{[]string{"cli->host", "result", "success"}, []Event{Result{Subtype: "success", Text: "pong: hello",
			SessionID: "08fc0215-c59e-4f32-a444-6f1d8297ad09", NumTurns: 1, Duration: 235 * ms, CostUSD: 0.00014000000000000001,
			Usage: Usage{InputTokens: 10, OutputTokens: 5}, StopReason: "end_turn", TerminalReason: "completed",
			UUID: "523b43eb-281f-4e30-9544-3c94ae3014d9", Indexed: true}}},
		{[]string{"cli->host", "result", "error_during_execution"}, []Event{Result{Subtype: "error_during_execution", IsError: true,
			Errors:    []string{"[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"},
			SessionID: "8b2a8e85-bb89-42b0-af07-b7aa23c0df2d", NumTurns: 2, Duration: 645 * ms, CostUSD: 7.999999999999999e-05,
			TerminalReason: "aborted_streaming", UUID: "f4494c2a-fce4-412b-b68c-71e4adc36e42", Indexed: true}}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.key[1:], "/"), func(t *testing.T) {
			got := stripRaw(decodeLine(exampleLine(t, tt.key...)))
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestDecodeInitKeepsRaw(t *testing.T) {
	line := exampleLine(t, "cli->host", "system", "init")
	evs := decodeLine(line)
	if len(evs) != 1 {
		t.Fatalf("got %d events", len(evs))
	}
	in, ok := evs[0].(Init)
	if !ok {
		t.Fatalf("got %T", evs[0])
	}
	if in.SessionID != "08fc0215-c59e-4f32-a444-6f1d8297ad09" || in.Model != "claude-opus-5-5" || in.PermissionMode != "default" ||
		in.CWD != "/srv/project" || in.Version != "2.1.330" || len(in.Tools) != 25 || in.Tools[2] != "Bash" {
		t.Errorf("init decoded wrong: %+v", in)
	}
	if string(in.Raw) != string(line) {
		t.Errorf("Raw differs from the line")
	}
	line[0] = ' ' // Raw must be a copy
	if in.Raw[0] != '{' {
		t.Errorf("Raw aliases the input line")
	}
}

func TestDecodePermissionRequest(t *testing.T) {
	evs := decodeLine(exampleLine(t, "cli->host", "control_request", "can_use_tool"))
	p, ok := evs[0].(PermissionRequest)
	if !ok || len(evs) != 1 {
		t.Fatalf("got %#v", evs)
	}
	if p.RequestID != "08fd9c1f-e6a9-4bf6-bf8a-f7a837fdb882" || p.ToolName != "Bash" || p.DisplayName != "Bash" ||
		string(p.Input) != `{"command":"touch ran.txt && echo hello","description":"Run the scripted command"}` ||
		p.Description != "Run the scripted command" || p.BlockedPath != "/srv/project/ran.txt" || p.ToolUseID != "toolu_fake_001" ||
		len(p.Suggestions) != 3 || p.RequiresUserInteraction {
		t.Errorf("decoded wrong: %+v", p)
	}
	if got := string(p.Suggestions[2]); got != `{"type":"setMode","mode":"acceptEdits","destination":"session"}` {
		t.Errorf("suggestion 2 = %s", got)
	}

	ask := decodeLine(exampleLine(t, "cli->host", "control_request", "can_use_tool", "AskUserQuestion"))[0].(PermissionRequest)
	if ask.ToolName != "AskUserQuestion" || !ask.RequiresUserInteraction || len(ask.Suggestions) != 0 {
		t.Errorf("AskUserQuestion decoded wrong: %+v", ask)
	}
	sub := decodeLine(exampleLine(t, "cli->host", "control_request", "can_use_tool", "Bash", "agent_id"))[0].(PermissionRequest)
	if sub.AgentID == "" {
		t.Errorf("subagent request lost agent_id: %+v", sub)
	}
	hook := decodeLine(exampleLine(t, "cli->host", "control_request", "can_use_tool", "Bash", "decision_reason_type=hook"))[0].(PermissionRequest)
	if hook.DecisionReasonType != "hook" || hook.BlockedPath != "" {
		t.Errorf("hook-asked request decoded wrong: %+v", hook)
	}
}

func TestDecodeVariants(t *testing.T) {
	t.Run("result origin", func(t *testing.T) {
		r := decodeLine(exampleLine(t, "cli->host", "result", "success", "origin=task-notification"))[0].(Result)
		if r.Origin != "task-notification" {
			t.Errorf("Origin = %q", r.Origin)
		}
	})
	t.Run("result max turns", func(t *testing.T) {
		r := decodeLine(exampleLine(t, "cli->host", "result", "error_max_turns"))[0].(Result)
		if !r.IsError || r.Subtype != "error_max_turns" || len(r.Errors) == 0 || r.Text != "" {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("result budget", func(t *testing.T) {
		r := decodeLine(exampleLine(t, "cli->host", "result", "error_max_budget_usd"))[0].(Result)
		if !r.IsError || r.Subtype != "error_max_budget_usd" {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("hook callback", func(t *testing.T) {
		h := decodeLine(exampleLine(t, "cli->host", "control_request", "hook_callback"))[0].(HookCallback)
		if h.RequestID == "" || h.CallbackID != "h1" || h.ToolUseID != "toolu_fake_001" || !strings.Contains(string(h.Input), `"hook_event_name":"PreToolUse"`) {
			t.Errorf("got %+v", h)
		}
	})
	t.Run("mcp message", func(t *testing.T) {
		var calls []MCPMessage
		for _, l := range loadTranscriptLines(t)["transcript-sdk-mcp.jsonl"] {
			for _, ev := range decodeLine(l) {
				if m, ok := ev.(MCPMessage); ok {
					calls = append(calls, m)
				}
			}
		}
		if len(calls) != 4 {
			t.Fatalf("got %d mcp_message requests, want 4 (initialize, initialized, tools/list, tools/call)", len(calls))
		}
		last := calls[3]
		if last.RequestID == "" || last.Server != "bridge" || !strings.Contains(string(last.Message), `"method":"tools/call"`) ||
			!strings.Contains(string(last.Message), `"arguments":{"text":"round trip"}`) {
			t.Errorf("got %+v", last)
		}
	})
	t.Run("informational", func(t *testing.T) {
		n := decodeLine(exampleLine(t, "cli->host", "system", "informational"))[0].(Notice)
		if n.Level != "warning" || n.Tag != "auto_mode_no_server_check" || !strings.HasPrefix(n.Text, "Auto mode") {
			t.Errorf("got %+v", n)
		}
	})
	t.Run("classifier denial", func(t *testing.T) {
		d := decodeLine(exampleLine(t, "cli->host", "system", "permission_denied", "decision_reason_type=classifier"))[0].(PermissionDenied)
		if d.ReasonType != "classifier" || d.DecisionReason != "Classifier unavailable" {
			t.Errorf("got %+v", d)
		}
	})
	t.Run("background task list", func(t *testing.T) {
		evs := decodeLine([]byte(`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"b1","run_id":"r","task_type":"local_bash","description":"Sleep"}]}`))
		want := []Event{BackgroundTasks{Tasks: []BackgroundTask{{TaskID: "b1", TaskType: "local_bash", Description: "Sleep"}}}}
		if !reflect.DeepEqual(evs, want) {
			t.Errorf("got %#v", evs)
		}
	})
	t.Run("api retry", func(t *testing.T) {
		evs := decodeLine([]byte(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":548,"error_status":500,"error":"server_error"}`))
		want := []Event{APIRetry{Attempt: 1, MaxRetries: 1, Delay: 548 * time.Millisecond, Status: 500, Error: "server_error"}}
		if !reflect.DeepEqual(evs, want) {
			t.Errorf("got %#v", evs)
		}
	})
	t.Run("subagent tool result list content", func(t *testing.T) {
		evs := decodeLine([]byte(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}],"is_error":true}]},"parent_tool_use_id":"p1"}`))
		want := []Event{ToolResult{ToolUseID: "t1", IsError: true, Content: "a\n[image]\nb", ParentToolUseID: "p1"}}
		if !reflect.DeepEqual(evs, want) {
			t.Errorf("got %#v", evs)
		}
	})
	t.Run("assistant several blocks", func(t *testing.T) {
		evs := decodeLine([]byte(`{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},"parent_tool_use_id":null}`))
		want := []Event{AssistantText{MessageID: "m1", Text: "hi"}, ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}
		if !reflect.DeepEqual(evs, want) {
			t.Errorf("got %#v", evs)
		}
	})
	t.Run("thinking delta", func(t *testing.T) {
		evs := decodeLine([]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}}}`))
		if !reflect.DeepEqual(evs, []Event{ThinkingDelta{Text: "let me see"}}) {
			t.Errorf("got %#v", evs)
		}
	})
	t.Run("status mode change", func(t *testing.T) {
		evs := decodeLine([]byte(`{"type":"system","subtype":"status","status":null,"permissionMode":"acceptEdits","uuid":"u"}`))
		if !reflect.DeepEqual(evs, []Event{StatusChange{PermissionMode: "acceptEdits"}}) {
			t.Errorf("got %#v", evs)
		}
	})
}

// TestDecodeMalformed: bad lines become DecodeError or Unknown, never a
// panic, and never stop anything.
func TestDecodeMalformed(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantType string // "", "decode", "unknown"
		unknown  [2]string
	}{
		{"blank", "   ", "", [2]string{}},
		{"not json", "Error: something broke", "decode", [2]string{}},
		{"truncated", `{"type":"result","subtype":"succ`, "decode", [2]string{}},
		{"array", `[1,2]`, "decode", [2]string{}},
		{"type not string", `{"type":5}`, "decode", [2]string{}},
		{"result wrong field type", `{"type":"result","num_turns":"three"}`, "decode", [2]string{}},
		{"assistant content not array", `{"type":"assistant","message":{"content":"x"}}`, "decode", [2]string{}},
		{"unknown type", `{"type":"banana","foo":1}`, "unknown", [2]string{"banana", ""}},
		{"unknown system subtype", `{"type":"system","subtype":"compact_boundary","x":{}}`, "unknown", [2]string{"system", "compact_boundary"}},
		{"unknown control request", `{"type":"control_request","request_id":"r1","request":{"subtype":"request_user_dialog"}}`, "unknown", [2]string{"control_request", "request_user_dialog"}},
		{"unknown stream event", `{"type":"stream_event","event":{"type":"error","error":{}}}`, "unknown", [2]string{"stream_event", "error"}},
		{"unknown delta", `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"wat_delta"}}}`, "unknown", [2]string{"stream_event", "content_block_delta:wat_delta"}},
		{"unknown block", `{"type":"assistant","message":{"content":[{"type":"hologram"}]}}`, "unknown", [2]string{"assistant", "block:hologram"}},
		{"null", `null`, "unknown", [2]string{"", ""}},
		{"unknown fields ignored", `{"type":"command_lifecycle","command_uuid":"u","state":"started","brand_new":{"a":[1]}}`, "", [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := decodeLine([]byte(tt.line))
			switch tt.wantType {
			case "":
				for _, ev := range evs {
					if _, bad := ev.(DecodeError); bad {
						t.Errorf("unexpected %#v", ev)
					}
					if _, bad := ev.(Unknown); bad {
						t.Errorf("unexpected %#v", ev)
					}
				}
			case "decode":
				if len(evs) != 1 {
					t.Fatalf("got %#v", evs)
				}
				de, ok := evs[0].(DecodeError)
				if !ok || de.Err == nil || string(de.Line) != strings.TrimSpace(tt.line) {
					t.Errorf("got %#v", evs[0])
				}
			case "unknown":
				if len(evs) != 1 {
					t.Fatalf("got %#v", evs)
				}
				u, ok := evs[0].(Unknown)
				if !ok || u.Type != tt.unknown[0] || u.Subtype != tt.unknown[1] || string(u.Raw) != tt.line {
					t.Errorf("got %#v", evs[0])
				}
			}
		})
	}
}

func TestDecodeErrorLineIsCapped(t *testing.T) {
	long := "x" + strings.Repeat("y", 10000)
	evs := decodeLine([]byte(long))
	de := evs[0].(DecodeError)
	if len(de.Line) != decodeErrorLineMax {
		t.Errorf("DecodeError.Line has %d bytes, want %d", len(de.Line), decodeErrorLineMax)
	}
}

// decodeLine decodes one line with a fresh Decoder.
func decodeLine(line []byte) []Event {
	var d Decoder
	return d.Decode(line)
}
