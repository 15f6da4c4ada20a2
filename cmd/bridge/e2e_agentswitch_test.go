package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSlackE2EAgentSwitch is the fallback recipe of docs/agents.md
// through the real binary and a fake Slack: a bot whose default profile
// is the Claude Code CLI (against the fake model) lists an ACP profile
// (the scripted fake ACP agent) in bots[].agents. A conversation on
// Claude moves with !agent to the ACP profile, which answers it in a
// fresh session (its history starts at the move: the Claude turn is not
// in it), and moves back with !agent to Claude, which answers again.
func TestSlackE2EAgentSwitch(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildFakeACP(t)
	acpWork := filepath.Join(t.TempDir(), "acp-work")
	if err := os.MkdirAll(acpWork, 0o755); err != nil {
		t.Fatal(err)
	}
	fallback := fmt.Sprintf("  fallback:\n    kind: acp\n    command: %q\n    workdir: %q\n    idle_timeout: 10m\n    approval_timeout: 2m\n", bin, acpWork)
	e := startSlackBridgeBot(t, profileOptions{extra: fallback}, "    agents: [fallback]\n", fmt.Sprintf("users: [%s]", alice))

	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	e.waitSettled(t, ts)

	e.slack.SendMessage(slackChan, alice, "!agent", ts)
	e.waitThreadText(t, ts, "`coder` (default) ← this conversation")
	e.slack.SendMessage(slackChan, alice, "!agent fallback", ts)
	e.waitThreadText(t, ts, "moved this conversation to agent `fallback`. It starts fresh")
	e.slack.SendMessage(slackChan, alice, "are you there", ts)
	e.waitThreadText(t, ts, "turn 1; history: are you there")
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "and now", ts)
	e.waitThreadText(t, ts, "turn 2; history: are you there | and now")
	e.waitSettled(t, ts)

	e.slack.SendMessage(slackChan, alice, "!agent coder", ts)
	e.waitThreadText(t, ts, "moved this conversation to agent `coder`")
	e.slack.SendMessage(slackChan, alice, "back on claude", ts)
	e.waitThreadText(t, ts, "pong: back on claude")
	e.waitSettled(t, ts)
	if thread := e.threadText(ts); strings.Count(thread, "turn ") != 2 {
		t.Errorf("the ACP agent answered after the move back:\n%s", e.dump())
	}
	t.Logf("thread:%s", e.dump())
}
