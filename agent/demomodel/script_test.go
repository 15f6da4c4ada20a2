package demomodel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
)

func userText(text string) fakemodel.Message {
	return fakemodel.Message{Role: "user", Blocks: []fakemodel.Block{{Type: "text", Text: text}}}
}

func toolUse(id, name, input string) fakemodel.Message {
	return fakemodel.Message{Role: "assistant", Blocks: []fakemodel.Block{
		{Type: "text", Text: "lead"}, {Type: "tool_use", ID: id, Name: name, Input: json.RawMessage(input)},
	}}
}

func toolResult(id, text string, isError bool) fakemodel.Message {
	return fakemodel.Message{Role: "user", Blocks: []fakemodel.Block{
		{Type: "tool_result", ToolUseID: id, Text: text, IsError: isError},
	}}
}

func TestPlan(t *testing.T) {
	const answered = `Your questions have been answered: "` + Question + `"="%s". You can now continue with these answers in mind.`
	tests := []struct {
		name     string
		messages []fakemodel.Message
		script   string
		tool     string   // name of the tool_use block, "" = none
		want     []string // substrings of the reply's text or tool input
	}{
		{"greeting gets the introduction", []fakemodel.Message{userText("hello")}, ScriptIntro, "",
			[]string{"demo mode", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "bridge example-config", "run a command"}},
		{"reminders before the text are skipped",
			[]fakemodel.Message{{Role: "user", Blocks: []fakemodel.Block{
				{Type: "text", Text: "<system-reminder>ask about anything</system-reminder>"},
				{Type: "text", Text: "Run a command, please"}}}},
			ScriptCommand, "Bash", []string{`"command":"echo 'Hello from your agent' \u003e hello.txt \u0026\u0026 ls -l hello.txt"`}},
		{"command keyword", []fakemodel.Message{userText("show me a permission")}, ScriptCommand, "Bash", []string{`"command":"echo 'Hello from your agent' \u003e hello.txt \u0026\u0026 ls -l hello.txt"`}},
		{"a test-fake directive never picks the command", []fakemodel.Message{userText("[bash rm -rf /]")}, ScriptCommand, "Bash",
			[]string{`"command":"echo 'Hello from your agent' \u003e hello.txt \u0026\u0026 ls -l hello.txt"`}},
		{"question keyword", []fakemodel.Message{userText("Can you ASK me something?")}, ScriptQuestion, "AskUserQuestion",
			[]string{Question, `"label":"Slack"`, `"label":"Web console only"`, `"multiSelect":false`}},
		{"the first keyword decides", []fakemodel.Message{userText("ask me to run a command")}, ScriptQuestion, "AskUserQuestion", nil},
		{"markdown keyword", []fakemodel.Message{userText("stream something long")}, ScriptMarkdown, "",
			[]string{"| platform |", "```go", "!cost"}},
		{"keywords are whole words", []fakemodel.Message{userText("the runway is asking… no: ask-less lsblk")}, ScriptQuestion, "AskUserQuestion", nil},
		{"no keyword", []fakemodel.Message{userText("lsblk runway")}, ScriptIntro, "", nil},
		{"command output", []fakemodel.Message{
			userText("run a command"), toolUse("toolu_1", "Bash", `{"command":"date"}`),
			toolResult("toolu_1", "Mon Nov 23 21:01:00 UTC 2026", false)},
			ScriptCommandOutput, "", []string{"```text\nMon Nov 23 21:01:00 UTC 2026\n```", "docs/rules.md"}},
		{"output with a fence gets a longer fence", []fakemodel.Message{
			userText("run a command"), toolUse("toolu_1", "Bash", `{"command":"date"}`),
			toolResult("toolu_1", "a ``` b", false)},
			ScriptCommandOutput, "", []string{"````text\na ``` b\n````"}},
		{"command denied", []fakemodel.Message{
			userText("run a command"), toolUse("toolu_1", "Bash", `{"command":"date"}`),
			toolResult("toolu_1", "Denied by ana\nsecond line", true)},
			ScriptCommandDenied, "", []string{"Nothing ran: Denied by ana second line", "run a command"}},
		{"answer with steps", []fakemodel.Message{
			userText("ask me"), toolUse("toolu_2", "AskUserQuestion", `{}`),
			toolResult("toolu_2", strings.ReplaceAll(answered, "%s", "Discord"), false)},
			ScriptAnswer, "", []string{"You chose **Discord**", "DISCORD_BOT_TOKEN", "docs/discord.md"}},
		{"free-text answer", []fakemodel.Message{
			userText("ask me"), toolUse("toolu_2", "AskUserQuestion", `{}`),
			toolResult("toolu_2", strings.ReplaceAll(answered, "%s", "Matrix"), false)},
			ScriptAnswer, "", []string{"You answered: Matrix."}},
		{"a system message after the tool result does not stop the loop", []fakemodel.Message{
			userText("run a command"), toolUse("toolu_1", "Bash", `{"command":"date"}`),
			toolResult("toolu_1", "today", false),
			{Role: "system", Blocks: []fakemodel.Block{{Type: "text", Text: "The user sent a new message while you were working:\nhello"}}}},
			ScriptCommandOutput, "", []string{"today"}},
		{"a later prompt starts afresh", []fakemodel.Message{
			userText("run a command"), toolUse("toolu_1", "Bash", `{"command":"date"}`),
			toolResult("toolu_1", "today", false), {Role: "assistant", Blocks: []fakemodel.Block{{Type: "text", Text: "ok"}}},
			userText("thanks")},
			ScriptIntro, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := 0
			r := Plan(fakemodel.Request{Messages: tc.messages}, func() string { ids++; return "toolu_demo" })
			if r.Script != tc.script {
				t.Fatalf("script %q, want %q (reply %q)", r.Script, tc.script, r.Text())
			}
			var got strings.Builder
			got.WriteString(r.Text())
			tool := ""
			for _, b := range r.Blocks {
				if b.Type == "tool_use" {
					tool = b.Name
					in, _ := json.Marshal(b.Input)
					got.Write(in)
				}
			}
			if tool != tc.tool || ids != min(1, len(tc.tool)) {
				t.Errorf("tool %q (%d ids), want %q", tool, ids, tc.tool)
			}
			if wantStop := map[bool]string{true: "tool_use", false: "end_turn"}[tc.tool != ""]; r.StopReason != wantStop {
				t.Errorf("stop reason %q, want %q", r.StopReason, wantStop)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.String(), w) {
					t.Errorf("reply lacks %q:\n%s", w, got.String())
				}
			}
		})
	}
}

// TestStreamedVisibly: the introduction and the markdown demo arrive in
// many deltas with a pause between them, so the page shows them streaming.
func TestStreamedVisibly(t *testing.T) {
	for _, prompt := range []string{"hello", "show markdown"} {
		r := Plan(fakemodel.Request{Messages: []fakemodel.Message{userText(prompt)}}, nil)
		if r.Chunks < 10 || r.Delay <= 0 {
			t.Errorf("%q: %d chunks, %v apart; want a visible stream", prompt, r.Chunks, r.Delay)
		}
	}
}

// TestTextsNameRealFiles: every repository path the demo tells people to
// read exists.
func TestTextsNameRealFiles(t *testing.T) {
	all := strings.Join([]string{introText, commandOutro, deniedOutro, markdownText}, "\n")
	for _, s := range platformSteps {
		all += "\n" + s
	}
	paths := regexp.MustCompile(`\b(?:docs|bridges)/[\w./-]*\w`).FindAllString(all, -1)
	if len(paths) < 5 {
		t.Fatalf("found only %v", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join("..", "..", p)); err != nil {
			t.Errorf("the demo names %s: %v", p, err)
		}
	}
}
