package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp/fakegemini"
	"github.com/agentbridge/agentbridge/agent/acp/fakeopenai"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSlackE2EACPSendFile: an agent of kind acp (the fake ACP agent,
// sandboxed as configured by default) gets the bridge's tools as a stdio
// MCP server in session/new — the bridge binary as the relay to the
// session's socket — and its send_file posts an attachment into its
// Slack thread, without a card, counted like Claude Code's.
func TestSlackE2EACPSendFile(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildFakeACP(t)
	e := startACPSlackBridge(t, bin, nil, "")
	content := writeReport(t, e.workdir)
	ts := e.slack.Mention(slackChan, alice, `mcp send_file {"path":"out/report.txt","comment":"the **report**"}`, "")
	e.reportPosted(t, ts, content, "the *report*", nil)
	// Every tool of the bridge, the schedules' too.
	e.waitThreadText(t, ts, "mcp bridge tools: cancel_schedule, list_schedules, schedule, send_file, send_message; "+
		"call send_file (error false): Posted report.txt")
	e.waitSettled(t, ts)
	for _, p := range e.slack.Posts() {
		if len(p.Buttons) > 0 {
			t.Errorf("send_file asked for permission: %q", e.text(p))
		}
	}
	e.sendFileCounted(t)
}

// TestSlackE2EOpenCodeSendFile: the real OpenCode (npm opencode-ai, as an
// agent of kind acp, sandboxed behind the egress gate) starts the bridge's
// tool server it is offered in session/new — the bridge binary as the
// relay, inside bubblewrap — and the model's call of send_file (the fake
// OpenAI API calls the tool OpenCode lists under that name) posts the file
// into the Slack thread.
func TestSlackE2EOpenCodeSendFile(t *testing.T) {
	t.Parallel()
	opencode := testkit.NeedTool(t, "opencode", "make opencode")
	fo := fakeopenai.New(t)
	e := startACPSlackBridge(t, opencode, opencodeArgs, opencodeProfile(t, opencode, fo))
	content := writeReport(t, e.workdir)
	ts := e.slack.Mention(slackChan, alice, `tool: send_file {"path":"out/report.txt","comment":"from OpenCode"}`, "")
	e.reportPosted(t, ts, content, "from OpenCode", nil)
	e.waitThreadText(t, ts, "tool said: Posted report.txt")
	e.waitSettled(t, ts)
	e.sendFileCounted(t)
}

// TestSlackE2ECodexSendFile: the real codex-acp (kind acp, sandboxed
// behind the egress gate) starts the bridge's tool server it is offered in
// session/new — the bridge binary as the relay, inside bubblewrap — and
// the model's call of send_file posts the file into the Slack thread.
func TestSlackE2ECodexSendFile(t *testing.T) {
	t.Parallel()
	codex := testkit.NeedTool(t, "codex-acp", "make codex-acp")
	fo := fakeopenai.New(t)
	workdir := filepath.Join(t.TempDir(), "work")
	e := startACPSlackBridgeIn(t, workdir, codex, nil, codexProfile(t, codex, workdir, fo))
	content := writeReport(t, e.workdir)
	ts := e.slack.Mention(slackChan, alice, `tool: send_file {"path":"out/report.txt","comment":"from Codex"}`, "")
	e.reportPosted(t, ts, content, "from Codex", func() string { return fmt.Sprintf("model requests: %+v", fo.Requests()) })
	// Codex hands the model the tool's whole result ("Wall time: …
	// Output: [{…"text":"Posted report.txt (20 B) …"}]"); the call is
	// shown by the title Codex gave it.
	e.waitThreadText(t, ts, "Posted report.txt (20 B) in the conversation")
	e.waitThreadText(t, ts, "› `Other: Tool: bridge/send_file`")
	e.waitSettled(t, ts)
	e.sendFileCounted(t)
}

// TestSlackE2EGeminiSendFile: the real Gemini CLI (kind acp, sandboxed
// behind the egress gate) in a folder it trusts (GEMINI_CLI_TRUST_WORKSPACE:
// it starts MCP servers only there) starts the bridge's tool server it is
// offered in session/new, and the model's call of send_file posts the file
// into the Slack thread. Gemini CLI asks before it calls an MCP tool: a
// card that names the tool and its arguments, allowed here.
func TestSlackE2EGeminiSendFile(t *testing.T) {
	t.Parallel()
	gemini := testkit.NeedTool(t, "gemini", "make gemini")
	fg := fakegemini.New(t)
	profile := strings.Replace(geminiProfile(t, gemini, fg), "env: { ", `env: { GEMINI_CLI_TRUST_WORKSPACE: "true", `, 1)
	e := startACPSlackBridge(t, gemini, []string{"--acp"}, profile)
	content := writeReport(t, e.workdir)
	ts := e.slack.Mention(slackChan, alice, `tool: send_file {"path":"out/report.txt","comment":"from Gemini"}`, "")
	m, err := e.slack.WaitForPost(func(m slackfake.Message) bool { return m.ThreadTS == ts && len(m.Buttons) > 0 }, e2eWait)
	if err != nil {
		t.Fatalf("Gemini CLI did not ask before calling the tool: %v\nposts: %s\nmodel requests: %+v", err, e.dump(), fg.Requests())
	}
	// The call's arguments come in the request's content, not rawInput.
	if card := e.text(m); !strings.Contains(card, "send_file (bridge MCP Server)") || !strings.Contains(card, `"path": "out/report.txt"`) {
		t.Errorf("the card does not say which tool with which arguments: %q", card)
	}
	e.slack.Click(slackChan, m.TS, alice, "allow", "")
	e.reportPosted(t, ts, content, "from Gemini", func() string { return fmt.Sprintf("model requests: %+v", fg.Requests()) })
	e.waitThreadText(t, ts, "Posted report.txt (20 B) in the conversation")
	e.waitSettled(t, ts)
	e.sendFileCounted(t)
}

// reportPosted waits for writeReport's file (content) to be
// posted into thread ts with comment, and checks what was posted. more,
// when set, adds to the failure message.
func (e *slackEnv) reportPosted(t *testing.T, ts string, content []byte, comment string, more func() string) {
	t.Helper()
	up, err := e.slack.WaitForUpload(func(u slackfake.Upload) bool { return u.ThreadTS == ts }, e2eWait)
	if err != nil {
		extra := ""
		if more != nil {
			extra = "\n" + more()
		}
		t.Fatalf("no upload in thread %s: %v\nposts: %s%s", ts, err, e.dump(), extra)
	}
	if up.Name != "report.txt" || up.Channel != slackChan || string(up.Content) != string(content) || up.Comment != comment {
		t.Errorf("upload = %+v", up)
	}
}

// sendFileCounted checks that the bridge counted one call of send_file
// that succeeded.
func (e *slackEnv) sendFileCounted(t *testing.T) {
	t.Helper()
	if m := e.bridge.metrics(t); !strings.Contains(m, `agentbridge_agent_tool_calls_total{bot="team",outcome="ok",tool="send_file"} 1`) {
		t.Errorf("tool call not counted:\n%s", grepLines(m, "agentbridge_agent_tool_calls_total"))
	}
}

// TestSlackE2EACPProfileMCPServer: a profile's own mcp_servers reach an
// agent of kind acp as stdio servers of session/new beside the bridge's
// tools: the agent (the fake ACP agent, sandboxed as by default) starts
// the server with its args and env inside its sandbox and lists its tools.
func TestSlackE2EACPProfileMCPServer(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildFakeACP(t)
	dir := t.TempDir()
	server := elicitMCPBinary(t, dir)
	workdir := filepath.Join(t.TempDir(), "work")
	logPath := filepath.Join(workdir, "elicit.log")
	e := startACPSlackBridgeIn(t, workdir, bin, nil, fmt.Sprintf("    sandbox_binds: [{ path: %q, mode: ro }]\n"+
		"    mcp_servers:\n      elicit: { command: %q, env: { ELICIT_LOG: %q } }\n", dir, server, logPath))
	ts := e.slack.Mention(slackChan, alice, "mcp:elicit", "")
	e.waitThreadText(t, ts, "mcp elicit tools: ask")
	e.waitSettled(t, ts)
	if b, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(b), `"tools/list"`) {
		t.Errorf("the server's log (its env's ELICIT_LOG) = %q, %v", b, err)
	}
	// The bridge's own tools are still offered.
	e.slack.SendMessage(slackChan, alice, "mcp:bridge", ts)
	e.waitThreadText(t, ts, "mcp bridge tools: cancel_schedule, list_schedules, schedule, send_file, send_message")
}

// TestSlackE2EOpenCodeProfileMCPServer: the real OpenCode starts a
// profile's MCP server (mcp_servers) it is offered in session/new, inside
// its sandbox, with its env, and the model's call of its tool reaches the
// server.
func TestSlackE2EOpenCodeProfileMCPServer(t *testing.T) {
	t.Parallel()
	opencode := testkit.NeedTool(t, "opencode", "make opencode")
	fo := fakeopenai.New(t)
	workdir := filepath.Join(t.TempDir(), "work")
	server := elicitMCPBinary(t, filepath.Join(workdir, "bin")) // in the workdir: the sandbox shows it
	logPath := filepath.Join(workdir, "elicit.log")
	e := startACPSlackBridgeIn(t, workdir, opencode, opencodeArgs, opencodeProfile(t, opencode, fo)+fmt.Sprintf("    mcp_servers:\n"+
		"      elicit: { command: %q, env: { ELICIT_LOG: %q } }\n", server, logPath))
	ts := e.slack.Mention(slackChan, alice, `tool: ask {"kind":"form"}`, "")
	// The server's form (MCP elicitation) goes to OpenCode, which has none:
	// it answers "method not found", and the tool says so.
	e.waitThreadText(t, ts, "tool said: elicitation result: error")
	e.waitSettled(t, ts)
	b, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(b), `"tools/call"`) || !strings.Contains(string(b), `"kind":"form"`) {
		t.Errorf("the server got no call of its tool (its log: %q, %v)\nposts: %s\nmodel requests: %+v", b, err, e.dump(), fo.Requests())
	}
}
