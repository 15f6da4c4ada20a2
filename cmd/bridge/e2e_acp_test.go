package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// startACPSlackBridge runs the bridge binary with one profile "coder" of
// kind acp (command and args, more profile keys in extra, each line
// indented by four spaces) behind a fake Slack; alice may talk to it and
// is its admin (!mode, !model).
func startACPSlackBridge(t *testing.T, command string, args []string, extra string) *slackEnv {
	t.Helper()
	return startACPSlackBridgeIn(t, filepath.Join(t.TempDir(), "work"), command, args, extra)
}

// startACPSlackBridgeIn is startACPSlackBridge with the profile's workdir.
func startACPSlackBridgeIn(t *testing.T, workdir, command string, args []string, extra string) *slackEnv {
	t.Helper()
	return startACPSlackBridgeTop(t, workdir, command, args, extra, "")
}

// startACPSlackBridgeTop is startACPSlackBridgeIn with more top-level
// keys after bots (YAML lines, unindented), e.g. a store section.
func startACPSlackBridgeTop(t *testing.T, workdir, command string, args []string, extra, top string) *slackEnv {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	sl := slackfake.New(t)
	cfg := fmt.Sprintf(`data_dir: "./data"
log: { level: debug, format: text }
http: { listen: "{{HTTP}}" }
agents:
  coder:
    kind: acp
    command: %q
    args: [%s]
    workdir: %q
    idle_timeout: 10m
    approval_timeout: 2m
    max_live: 4
%sbots:
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q }
    access:
      users: [%s]
      admins: [%s]
%s`, command, strings.Join(quoted, ", "), workdir, extra, sl.URL(), alice, alice, top)
	env := []string{"SLACK_BOT_TOKEN=" + slackfake.BotToken, "SLACK_APP_TOKEN=" + slackfake.AppToken}
	ab := agentBridge{dir: dir, cfg: cfg, env: env, bridge: startBridge(t, dir, cfg, env...), workdir: workdir}
	if err := sl.WaitForConnections(1, e2eWait); err != nil {
		t.Fatalf("bridge never opened a Socket Mode connection: %v", err)
	}
	return &slackEnv{ab: &ab, slack: sl, bridge: ab.bridge, workdir: workdir}
}

// TestSlackE2EACPAgent drives an agent of kind acp (the scripted fake
// ACP agent) through the real binary, the same core and cards as Claude
// Code: a hello turn streamed into the thread, a follow-up with its
// history, a permission card allowed, one denied and one always allowed
// (the same command then runs without a card), a command a rule allows
// run without a card, malformed output (one notice), !stop of a running turn, and after
// a restart of the bridge the conversation resumed (session/load).
func TestSlackE2EACPAgent(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildFakeACP(t)
	e := startACPSlackBridge(t, bin, nil, "    rules:\n      - { tool: Bash, match: \"ls *\", action: allow }\n")

	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "Hello from fake ACP")
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "second", ts)
	e.waitThreadText(t, ts, "turn 2; history:")
	e.waitSettled(t, ts)

	e.slack.SendMessage(slackChan, alice, "run: echo ACP-ALLOWED", ts)
	card := e.waitCard(t, ts)
	if !strings.Contains(e.text(card), "echo ACP-ALLOWED") {
		t.Errorf("the card does not show the command: %q", e.text(card))
	}
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitThreadText(t, ts, "ran (completed, option yes): ACP-ALLOWED")
	e.waitSettled(t, ts)

	e.slack.SendMessage(slackChan, alice, "run: echo ACP-DENIED", ts)
	card = e.waitCardWith(t, ts, "ACP-DENIED")
	e.slack.Click(slackChan, card.TS, alice, "deny", "")
	e.waitThreadText(t, ts, "denied")
	e.waitSettled(t, ts)

	// Always: the bridge keeps a grant for exactly this command, and the
	// agent's allow_always option is picked; the same command later runs
	// without a card.
	e.slack.SendMessage(slackChan, alice, "run: echo ACP-ALWAYS", ts)
	card = e.waitCardWith(t, ts, "ACP-ALWAYS")
	e.slack.Click(slackChan, card.TS, alice, "always", "")
	e.waitThreadText(t, ts, "ran (completed, option always): ACP-ALWAYS")
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "run: echo ACP-ALWAYS", ts)
	e.waitThreadText(t, ts, "ran (completed, option yes): ACP-ALWAYS")
	e.waitSettled(t, ts)

	e.slack.SendMessage(slackChan, alice, "run: ls -a", ts)
	e.waitThreadText(t, ts, "ran (completed, option yes): .")
	e.waitSettled(t, ts)

	// Malformed output, unknown notifications and an fs/* request the
	// bridge does not serve: one notice, and the turn completes.
	e.slack.SendMessage(slackChan, alice, "garbage", ts)
	e.waitThreadText(t, ts, "wrote something that is not JSON-RPC")
	e.waitThreadText(t, ts, "fs answer: ")
	e.waitSettled(t, ts)

	e.slack.SendMessage(slackChan, alice, "slow", ts)
	e.waitThreadText(t, ts, "working…")
	e.slack.SendMessage(slackChan, alice, "!stop", ts)
	e.waitThreadText(t, ts, "⏹ Stopped.")
	e.waitSettled(t, ts)

	// The fake reports no cost: said, never a cost of $0.
	e.slack.SendMessage(slackChan, alice, "!cost", ts)
	e.waitThreadText(t, ts, "This conversation: no cost reported by this agent (kind acp); over ")
	e.waitThreadText(t, ts, ": no cost reported; over ") // the bot's line: its only agent reports none

	e.restartBridge(t)
	e.slack.SendMessage(slackChan, alice, "after the restart", ts)
	// Ten prompts so far, the first one "hello": the agent remembers them.
	e.waitThreadText(t, ts, "turn 10; history: hello | second | run: echo ACP-ALLOWED")
	if strings.Contains(e.threadText(ts), "fresh session") {
		t.Errorf("the session was not resumed:\n%s", e.dump())
	}
	if th := e.threadText(ts); strings.Contains(th, "· $0.0000_") || !strings.Contains(th, "· no cost reported_") {
		t.Errorf("an agent without a cost: the footers show a cost of $0, or no notice of none:\n%s", e.dump())
	}
	t.Logf("thread:%s", e.dump())
}

// TestSlackE2EACPModesAndCost: !mode and !model of an agent of kind acp
// list the modes and models the agent offers and switch among them (an
// admin's commands, as for Claude Code), refuse one it does not offer and
// one that would make it stop asking; the choices outlive a restart of
// the bridge; the cost the agent reports (usage_update) and its tokens
// are the footers' and !cost's.
func TestSlackE2EACPModesAndCost(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildFakeACP(t)
	e := startACPSlackBridge(t, bin, nil, "    env: { FAKEACP_COST: \"1\" }\n")

	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "Hello from fake ACP")
	e.waitSettled(t, ts)
	e.waitThreadText(t, ts, "· $0.2500_")
	// The conversation, with no mode or model of its own yet, took the
	// profile's warm spare (it spawns like one).
	if !handedOver.MatchString(e.bridge.logs.String()) {
		t.Errorf("the first conversation did not get the warm spare\nlogs:\n%s", e.bridge.logs)
	}
	e.slack.SendMessage(slackChan, alice, "!mode", ts)
	e.waitThreadText(t, ts, "▶ `ask` Ask — the ask mode")
	e.slack.SendMessage(slackChan, alice, "!mode yolo", ts)
	e.waitThreadText(t, ts, "makes the agent run its tools without asking")
	e.slack.SendMessage(slackChan, alice, "!mode acceptEdits", ts)
	e.waitThreadText(t, ts, "`acceptEdits` is not one of this agent's modes")
	e.slack.SendMessage(slackChan, alice, "!mode locked", ts)
	e.waitThreadText(t, ts, "the running agent refused the mode")
	e.slack.SendMessage(slackChan, alice, "!mode plan", ts)
	e.waitThreadText(t, ts, "Mode set to `plan`.")
	e.slack.SendMessage(slackChan, alice, "!model", ts)
	e.waitThreadText(t, ts, "• `fake-large`")
	e.slack.SendMessage(slackChan, alice, "!model fake-large", ts)
	e.waitThreadText(t, ts, "Model set to `fake-large`.")
	e.slack.SendMessage(slackChan, alice, "whoami", ts)
	whoami := func(m slackfake.Message) bool {
		return m.ThreadTS == ts && strings.Contains(e.text(m), "mode plan, model fake-large")
	}
	first, err := e.slack.WaitForPost(whoami, e2eWait)
	if err != nil {
		t.Fatalf("no answer to whoami: %v\n%s", err, e.dump())
	}
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "!status", ts)
	e.waitThreadText(t, ts, "• model: `fake-large` · mode: `plan`")
	e.slack.SendMessage(slackChan, alice, "!cost", ts)
	e.waitThreadText(t, ts, "This conversation: $0.5000 over 2 turns (240 in, 60 out tokens")

	e.restartBridge(t)
	e.slack.SendMessage(slackChan, alice, "whoami", ts)
	if _, err := e.slack.WaitForPost(func(m slackfake.Message) bool { return whoami(m) && m.TS != first.TS }, e2eWait); err != nil {
		t.Fatalf("no answer to whoami after the restart: %v\n%s", err, e.dump())
	}
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "!cost", ts)
	// The resumed session's earlier cost is not counted again.
	e.waitThreadText(t, ts, "This conversation: $0.7500 over 3 turns")
	t.Logf("thread:%s", e.dump())
}

// waitCardWith waits for a card in the thread whose text has want.
func (e *slackEnv) waitCardWith(t *testing.T, thread, want string) slackfake.Message {
	t.Helper()
	m, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == thread && len(m.Buttons) > 0 && strings.Contains(e.text(m), want)
	}, e2eWait)
	if err != nil {
		t.Fatalf("no card with %q in thread %s: %v\nposts: %s", want, thread, err, e.dump())
	}
	return m
}

// restartBridge stops the bridge gracefully, starts it again on the same
// data_dir and waits for its second Socket Mode connection to Slack.
func (e *slackEnv) restartBridge(t *testing.T) {
	t.Helper()
	if err := e.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}
	e.ab.restart(t)
	e.bridge = e.ab.bridge
	if err := e.slack.WaitForConnections(2, e2eWait); err != nil {
		t.Fatalf("the restarted bridge never connected: %v", err)
	}
}

// realACPTurns is what the end-to-end tests of the real ACP agents share, in
// a new thread it returns: hello and a follow-up with its history (the
// fake API echoes "<heard>TEXT (N user messages)"), a command allowed on its
// card (it runs in the workdir: the thread shows allowed) and one denied (it
// does not run: the thread shows denied), and a streamed turn stopped.
// marker names the commands' output ("GEMINI" → GEMINI-ALLOWED).
func (e *slackEnv) realACPTurns(t *testing.T, workdir, heard, marker string, allowed, denied []string) string {
	t.Helper()
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, heard+"hello (1 user messages)")
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "second", ts)
	e.waitThreadText(t, ts, heard+"second (2 user messages)")
	e.waitSettled(t, ts)
	for _, c := range []struct {
		file, choice string
		want         []string
	}{{"allowed", "allow", allowed}, {"denied", "deny", denied}} {
		e.slack.SendMessage(slackChan, alice, "run: touch "+c.file+".txt && echo "+marker+"-"+strings.ToUpper(c.file), ts)
		card := e.waitCardWith(t, ts, "touch "+c.file+".txt")
		e.slack.Click(slackChan, card.TS, alice, c.choice, "")
		for _, w := range c.want {
			e.waitThreadText(t, ts, w)
		}
		e.waitSettled(t, ts)
		_, err := os.Stat(filepath.Join(workdir, c.file+".txt"))
		if ran := err == nil; ran != (c.choice == "allow") {
			t.Errorf("the %s command ran: %v, want %v", c.file, ran, c.choice == "allow")
		}
	}
	e.slack.SendMessage(slackChan, alice, "slow", ts)
	e.waitThreadText(t, ts, "working on step 2")
	e.slack.SendMessage(slackChan, alice, "!stop", ts)
	e.waitThreadText(t, ts, "⏹ Stopped.")
	e.waitSettled(t, ts)
	return ts
}
