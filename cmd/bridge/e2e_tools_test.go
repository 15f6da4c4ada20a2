package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// sendFilePrompt makes the fake model call the bridge's send_file tool.
const sendFilePrompt = `[tool mcp__bridge__send_file {"path":"out/report.txt","comment":"the **report**"}]`

// writeReport puts the file the agent sends into its workdir.
func writeReport(t *testing.T, workdir string) []byte {
	t.Helper()
	content := []byte("all 42 tests passed\n")
	if err := os.MkdirAll(filepath.Join(workdir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workdir, "out", "report.txt"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	return content
}

// TestSlackE2ESendFile: the agent's send_file posts an attachment into its
// Slack thread through the external upload, without asking, and the call
// is counted.
func TestSlackE2ESendFile(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	content := writeReport(t, e.workdir)
	ts := e.slack.Mention(slackChan, alice, sendFilePrompt, "")
	up, err := e.slack.WaitForUpload(func(u slackfake.Upload) bool { return u.ThreadTS == ts }, e2eWait)
	if err != nil {
		t.Fatalf("no upload in thread %s: %v\nposts: %s", ts, err, e.dump())
	}
	if up.Name != "report.txt" || up.Channel != slackChan || string(up.Content) != string(content) || up.Comment != "the *report*" {
		t.Errorf("upload = %+v", up)
	}
	e.waitThreadText(t, ts, "tool said: Posted report.txt")
	for _, p := range e.slack.Posts() {
		if len(p.Buttons) > 0 {
			t.Errorf("send_file asked for permission: %q", e.text(p))
		}
	}
	if m := e.bridge.metrics(t); !strings.Contains(m, `agentbridge_agent_tool_calls_total{bot="team",outcome="ok",tool="send_file"} 1`) {
		t.Errorf("tool call not counted:\n%s", grepLines(m, "agentbridge_agent_tool_calls_total"))
	}
}

// TestDiscordE2ESendFile: the agent's send_file posts an attachment into
// its Discord thread as a multipart message.
func TestDiscordE2ESendFile(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	content := writeReport(t, e.workdir)
	thread := e.startThread(t, sendFilePrompt)
	m, err := e.dc.WaitForMessage(func(m discordfake.Message) bool { return m.ChannelID == thread && len(m.Attachments) > 0 }, e2eWait)
	if err != nil {
		t.Fatalf("no attachment in thread %s: %v", thread, err)
	}
	if got, _ := e.dc.Attachment(m.ID, "report.txt"); string(got) != string(content) || m.Content != "the **report**" || !m.AuthorIsBot {
		t.Errorf("message %+v with %q", m, got)
	}
	e.waitText(t, thread, "tool said: Posted report.txt")
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
