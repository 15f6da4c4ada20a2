package fakemodel

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testdataDir is this package's testdata directory.
func testdataDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("runtime.Caller failed")
	}
	return filepath.Join(filepath.Dir(file), "testdata")
}

// captured loads a request body the CLI 2.1.330 really sent (paths rewritten,
// tool schemas trimmed).
func captured(t *testing.T, name string) Request {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(testdataDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return mkRequest(t, string(body))
}

// mkRequest parses a Messages API body.
func mkRequest(t *testing.T, body string) Request {
	t.Helper()
	r := Request{Method: "POST", Path: "/v1/messages", Body: []byte(body)}
	if err := r.parseBody(); err != nil {
		t.Fatal(err)
	}
	return r
}

// msgs builds a streaming request body from a messages array literal.
func msgs(messages string) string {
	return `{"model":"claude-test","stream":true,"max_tokens":100,"messages":` + messages + `}`
}

// counter returns a tool id generator.
func counter() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("toolu_fake_%03d", n) }
}

func TestPlanReplyCaptured(t *testing.T) {
	tests := []struct {
		file, script, text string
	}{
		{"bgbash-tool-result.json", "tool-result", "started in background"},
		{"task-notification.json", "task-notification", `background done: Background command "Run the scripted command in the background" completed (exit code 0)`},
		{"folded-message.json", "pong", "tool said: (Bash completed with no output)\npong: folded text"},
		{"set-model-probe.json", "pong", "pong: Hi"},
		{"echo-history.json", "echo-history", "history: [bgbash sleep 1 && echo hi] | [error 500] | [bash touch y] | folded text"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r := PlanReply(captured(t, tc.file), counter())
			if r.Script != tc.script || r.Text() != tc.text || r.StopReason != "end_turn" {
				t.Errorf("got script %q stop %q text %q\nwant script %q text %q", r.Script, r.StopReason, r.Text(), tc.script, tc.text)
			}
		})
	}
}

func TestCapturedRequestParsing(t *testing.T) {
	req := captured(t, "echo-history.json")
	if req.Model != "claude-sonnet-5-5" || !req.Stream || req.MaxTokens != 128000 {
		t.Errorf("model %q stream %v max_tokens %d", req.Model, req.Stream, req.MaxTokens)
	}
	if !strings.Contains(req.System, "x-anthropic-billing-header") || len(req.Tools) == 0 || req.Tools[0] != "Agent" {
		t.Errorf("system %.60q tools %v", req.System, req.Tools)
	}
	if got := LastUserText(req); got != "[echo-history]" {
		t.Errorf("LastUserText = %q", got)
	}
	if got := workingDir(req); got != "/srv/project" {
		t.Errorf("workingDir = %q", got)
	}
	roles := ""
	for _, m := range req.Messages {
		roles += m.Role[:1]
	}
	if roles != "usauauauausaus" {
		t.Errorf("roles = %s", roles)
	}
	var toolUse, toolResult int
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			switch b.Type {
			case "tool_use":
				toolUse++
				if b.ID == "" || b.Name != "Bash" || len(b.Input) == 0 {
					t.Errorf("tool_use block %+v", b)
				}
			case "tool_result":
				toolResult++
				if b.ToolUseID == "" || b.Text == "" {
					t.Errorf("tool_result block %+v", b)
				}
			}
		}
	}
	if toolUse != 2 || toolResult != 2 {
		t.Errorf("%d tool_use, %d tool_result blocks, want 2 each", toolUse, toolResult)
	}
	probe := captured(t, "set-model-probe.json")
	if probe.Stream || probe.MaxTokens != 1 || len(probe.Tools) != 0 || LastUserText(probe) != "Hi" {
		t.Errorf("probe parsed as %+v", probe)
	}
}

func TestPlanReply(t *testing.T) {
	const env = `{"role":"system","content":"# Environment\n - Primary working directory: /srv/project\n - Platform: linux"}`
	tests := []struct {
		name     string
		messages string
		want     Reply
	}{
		{
			name:     "pong",
			messages: `[{"role":"user","content":[{"type":"text","text":"<system-reminder>\nnote\n</system-reminder>"},{"type":"text","text":"hello"}]},` + env + `]`,
			want:     textReply("pong", "pong: hello"),
		},
		{
			name:     "no user message",
			messages: `[]`,
			want:     textReply("pong", "pong: "),
		},
		{
			name:     "merged messages use the newest text",
			messages: `[{"role":"user","content":[{"type":"text","text":"[error 500]\n"},{"type":"text","text":"hello"}]}]`,
			want:     textReply("pong", "pong: hello"),
		},
		{
			name:     "bash",
			messages: `[{"role":"user","content":"[bash touch x]"}]`,
			want:     toolReply("bash", "Running the command.", "toolu_fake_001", "Bash", map[string]any{"command": "touch x", "description": "Run the scripted command"}),
		},
		{
			name:     "bgbash",
			messages: `[{"role":"user","content":"[bgbash sleep 9]"}]`,
			want: toolReply("bgbash", "Starting it in the background.", "toolu_fake_001", "Bash",
				map[string]any{"command": "sleep 9", "description": "Run the scripted command in the background", "run_in_background": true}),
		},
		{
			name:     "write resolves a relative path against the working directory",
			messages: `[{"role":"user","content":"[write notes.txt hi there]"},` + env + `]`,
			want:     toolReply("write", "Writing the file.", "toolu_fake_001", "Write", map[string]any{"file_path": "/srv/project/notes.txt", "content": "hi there"}),
		},
		{
			name:     "edit keeps an absolute path",
			messages: `[{"role":"user","content":"[edit /etc/x a b]"},` + env + `]`,
			want:     toolReply("edit", "Editing the file.", "toolu_fake_001", "Edit", map[string]any{"file_path": "/etc/x", "old_string": "a", "new_string": "b"}),
		},
		{
			name:     "askmulti",
			messages: `[{"role":"user","content":"[askmulti Which? | A | B]"}]`,
			want: toolReply("askmulti", "I have a question.", "toolu_fake_001", "AskUserQuestion", map[string]any{"questions": []any{map[string]any{
				"question": "Which?", "header": "Question", "multiSelect": true,
				"options": []any{map[string]any{"label": "A", "description": "Choose A"}, map[string]any{"label": "B", "description": "Choose B"}},
			}}}),
		},
		{
			name:     "error",
			messages: `[{"role":"user","content":"[error 529]"}]`,
			want:     Reply{Script: "error", Status: 529, ErrorType: "overloaded_error", ErrorMessage: "fakemodel: scripted error 529"},
		},
		{
			name:     "bad directive",
			messages: `[{"role":"user","content":"[slow nope]"}]`,
			want:     textReply("bad-directive", "fakemodel: bad directive: [slow nope]: want a positive integer, got \"nope\""),
		},
		{
			name: "tool result continues with the prompt's pacing",
			messages: `[{"role":"user","content":"[slow 3] [bash ls]"},
				{"role":"assistant","content":[{"type":"text","text":"Running."},{"type":"tool_use","id":"toolu_fake_001","name":"Bash","input":{"command":"ls"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fake_001","content":[{"type":"text","text":"a.txt"},{"type":"text","text":"b.txt"}]},{"type":"text","text":"<system-reminder>x</system-reminder>"}]}]`,
			want: func() Reply {
				r := textReply("tool-result", "tool said: a.txt\nb.txt")
				r.Chunks, r.Delay = 3, DefaultSlowDelay
				return r
			}(),
		},
		{
			name: "tool error",
			messages: `[{"role":"user","content":"[write /x y]"},
				{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/x","content":"y"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"denied","is_error":true}]}]`,
			want: textReply("tool-result", "tool said: ERROR: denied"),
		},
		{
			name: "ask answer",
			messages: `[{"role":"user","content":"[ask Q? | A | B]"},
				{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"AskUserQuestion","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Q?=A"}]}]`,
			want: textReply("tool-result", "answer was: Q?=A"),
		},
		{
			name: "echo history skips the CLI's own text",
			messages: `[{"role":"user","content":"one"},{"role":"assistant","content":"pong: one"},
				{"role":"user","content":[{"type":"text","text":"<command-name>/model</command-name>"},{"type":"text","text":"<local-command-stdout>Set model</local-command-stdout>"},{"type":"text","text":"two"}]},
				{"role":"assistant","content":"pong: two"},
				{"role":"user","content":"[echo-history]"}]`,
			want: textReply("echo-history", "history: one | two"),
		},
		{
			name:     "tool",
			messages: `[{"role":"user","content":"[tool mcp__bridge__send_message {\"text\":\"hi\"}]"}]`,
			want:     toolReply("tool", "Calling mcp__bridge__send_message.", "toolu_fake_001", "mcp__bridge__send_message", map[string]any{"text": "hi"}),
		},
		{
			name: "a task notification calls the prompt's ondone tool, once",
			messages: `[{"role":"user","content":"[bgbash sleep 1] [ondone mcp__bridge__send_message {\"text\":\"built\"}]"},
				{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 1","run_in_background":true}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Command running in background"}]},
				{"role":"assistant","content":"started in background"},
				{"role":"user","content":[{"type":"text","text":"<system-reminder>\n<task-notification><summary>sleep finished</summary></task-notification></system-reminder>"}]}]`,
			want: toolReply("task-notification-tool", "background done: sleep finished", "toolu_fake_001", "mcp__bridge__send_message", map[string]any{"text": "built"}),
		},
		{
			name: "after the ondone tool the turn ends",
			messages: `[{"role":"user","content":"[bgbash sleep 1] [ondone mcp__bridge__send_message {\"text\":\"built\"}]"},
				{"role":"assistant","content":"started in background"},
				{"role":"user","content":[{"type":"text","text":"<system-reminder>\n<task-notification><summary>sleep finished</summary></task-notification></system-reminder>"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"mcp__bridge__send_message","input":{"text":"built"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"posted"}]}]`,
			want: textReply("tool-result", "tool said: posted"),
		},
		{
			name:     "echo history with nothing before",
			messages: `[{"role":"user","content":"[echo-history]"}]`,
			want:     textReply("echo-history", "history: (none)"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanReply(mkRequest(t, msgs(tc.messages)), counter())
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPlanReplyLong(t *testing.T) {
	r := PlanReply(mkRequest(t, msgs(`[{"role":"user","content":"[long 6000]"}]`)), counter())
	if r.Script != "long" || len(r.Text()) < 5400 || len(codeBlock(r.Text())) <= 2000 {
		t.Errorf("script %q len %d code %d", r.Script, len(r.Text()), len(codeBlock(r.Text())))
	}
}

func TestPlanReplySlowms(t *testing.T) {
	r := PlanReply(mkRequest(t, msgs(`[{"role":"user","content":"[slowms 5] [slow 4] hi"}]`)), counter())
	if r.Chunks != 4 || r.Delay != 5*time.Millisecond {
		t.Errorf("chunks %d delay %v", r.Chunks, r.Delay)
	}
}
