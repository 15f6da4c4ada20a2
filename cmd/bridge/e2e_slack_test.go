package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

const (
	slackChan = "C0001"
	alice     = "UALICE"
	stranger  = "UEVE"
	e2eWait   = 90 * time.Second
)

// slackEnv is a running bridge binary wired to a fake Slack and the real
// Claude Code CLI talking to the fake model.
type slackEnv struct {
	ab      *agentBridge
	slack   *slackfake.Server
	model   *fakemodel.Server
	bridge  *bridgeProc
	workdir string
}

func startSlackBridge(t testing.TB) *slackEnv {
	t.Helper()
	return startSlackBridgeWith(t, profileOptions{})
}

// startSlackBridgeWith is startSlackBridge with a varied agent profile.
func startSlackBridgeWith(t testing.TB, po profileOptions) *slackEnv {
	t.Helper()
	return startSlackBridgeAccess(t, po, fmt.Sprintf("users: [%s]", alice))
}

// startSlackBridgeAccess is startSlackBridgeWith with the bot's access
// keys (YAML lines, each at the indentation of the first).
func startSlackBridgeAccess(t testing.TB, po profileOptions, access string) *slackEnv {
	t.Helper()
	return startSlackBridgeBot(t, po, "", access)
}

// startSlackBridgeBot is startSlackBridgeAccess with more keys for the bot
// (YAML lines, each indented by four spaces, e.g. "    verbosity: quiet\n").
func startSlackBridgeBot(t testing.TB, po profileOptions, botExtra, access string) *slackEnv {
	t.Helper()
	sl := slackfake.New(t)
	ab := startAgentBridgeWith(t, po, fmt.Sprintf(`bots:
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q }
%s    access:
      %s
`, sl.URL(), botExtra, access), "SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken)
	if err := sl.WaitForConnections(1, e2eWait); err != nil {
		t.Fatalf("bridge never opened a Socket Mode connection: %v", err)
	}
	t.Cleanup(func() {
		logs := ab.bridge.logs.String()
		if strings.Contains(logs, slackfake.BotToken) || strings.Contains(logs, slackfake.AppToken) {
			t.Errorf("bridge logs contain a Slack token")
		}
	})
	return &slackEnv{ab: &ab, slack: sl, model: ab.model, bridge: ab.bridge, workdir: ab.workdir}
}

// waitThreadText waits until the latest version of some message in the
// thread (posted or edited) contains want.
// waitSettled waits until no message of thread is an open stream: once an
// answer shows, its stream may still be open (and its stop still to come)
// for a moment on a loaded machine. Tests that hold, lose or refuse the
// next platform calls wait for this first, or they catch the earlier
// answer's calls.
func (e *slackEnv) waitSettled(t *testing.T, thread string) {
	t.Helper()
	if err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == thread && cur.Stream == slackfake.Streaming {
				return false
			}
		}
		return true
	}, e2eWait); err != nil {
		t.Fatalf("thread %s keeps an open stream: %v\nposts: %s", thread, err, e.dump())
	}
}

// waitAnswer waits until thread shows want in a finished answer (its
// footer " · $" in the same message): a streamed answer shows its text
// before its turn's result is recorded.
func (e *slackEnv) waitAnswer(t *testing.T, thread, want string) {
	t.Helper()
	e.waitThreadText(t, thread, want)
	if err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == thread && strings.Contains(e.text(cur), want) && strings.Contains(e.text(cur), " · $") {
				return true
			}
		}
		return false
	}, e2eWait); err != nil {
		t.Fatalf("thread %s never finished the answer %q: %v\nposts: %s", thread, want, err, e.dump())
	}
}

func (e *slackEnv) waitThreadText(t *testing.T, thread, want string) {
	t.Helper()
	err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if p.ThreadTS != thread {
				continue
			}
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && strings.Contains(e.text(cur), want) {
				return true
			}
		}
		return false
	}, e2eWait)
	if err != nil {
		t.Fatalf("thread %s never showed %q: %v\nposts: %s", thread, want, err, e.dump())
	}
}

func (e *slackEnv) text(m slackfake.Message) string {
	return m.Text + "\n" + strings.Join(m.Sections, "\n")
}

func (e *slackEnv) dump() string {
	var b strings.Builder
	for _, p := range e.slack.Posts() {
		cur, _ := e.slack.Current(p.Channel, p.TS)
		fmt.Fprintf(&b, "\n[%s thread=%s buttons=%d] %q", p.TS, p.ThreadTS, len(cur.Buttons), e.text(cur))
	}
	return b.String()
}

// waitCard waits for a card (a post with buttons) in the thread.
func (e *slackEnv) waitCard(t *testing.T, thread string) slackfake.Message {
	t.Helper()
	m, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == thread && len(m.Buttons) > 0
	}, e2eWait)
	if err != nil {
		t.Fatalf("no card in thread %s: %v\nposts: %s", thread, err, e.dump())
	}
	return m
}

func TestSlackE2EConversation(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "hello there", "")
	e.waitThreadText(t, ts, "pong: hello there")

	// A follow-up in the thread needs no mention and reaches the same session.
	e.slack.SendMessage(slackChan, alice, "[echo-history] what did I say?", ts)
	e.waitThreadText(t, ts, "history: hello there")

	sessions := map[string]bool{}
	for _, r := range e.model.MessagesRequests() {
		if id := r.Header.Get("X-Claude-Code-Session-Id"); id != "" {
			sessions[id] = true
		}
	}
	if len(sessions) != 1 {
		t.Errorf("the thread used %d Claude sessions, want 1: %v", len(sessions), sessions)
	}
	// A stranger (not in access.users) does not reach the agent.
	before := len(e.model.MessagesRequests())
	e.slack.SendMessage(slackChan, stranger, "let me in", ts)
	e.slack.SendMessage(slackChan, alice, "still me", ts)
	e.waitThreadText(t, ts, "pong: still me")
	for _, r := range e.model.MessagesRequests()[before:] {
		if strings.Contains(fakemodel.LastUserText(r), "let me in") {
			t.Errorf("a stranger's message reached the agent")
		}
	}
	m := e.bridge.metrics(t)
	for _, want := range []string{
		`agentbridge_messages_total{bot="team",outcome="accepted"} 3`,
		`agentbridge_messages_total{bot="team",outcome="refused"} 1`,
		`agentbridge_agent_results_total{bot="team",outcome="ok"} 3`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestSlackE2EApprovals(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)

	// Allow by the requester runs the tool; a stranger's click changes nothing.
	ts := e.slack.Mention(slackChan, alice, "[bash touch allowed.txt]", "")
	card := e.waitCard(t, ts)
	if !strings.Contains(e.text(card), "touch allowed.txt") {
		t.Errorf("card does not show the command: %q", e.text(card))
	}
	e.slack.Click(slackChan, card.TS, stranger, "allow", "")
	if _, err := e.slack.WaitForEphemeral(func(m slackfake.Ephemeral) bool { return m.User == stranger }, e2eWait); err != nil {
		t.Fatalf("stranger got no ephemeral refusal: %v", err)
	}
	// The refusal is the core's decision on the click: the card is as it was.
	if cur, _ := e.slack.Current(slackChan, card.TS); len(cur.Buttons) == 0 {
		t.Fatalf("a stranger's click decided the card: %q", e.text(cur))
	}
	if _, err := os.Stat(filepath.Join(e.workdir, "allowed.txt")); err == nil {
		t.Fatal("the tool ran after a stranger's click")
	}
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitThreadText(t, ts, "tool said")
	if _, err := os.Stat(filepath.Join(e.workdir, "allowed.txt")); err != nil {
		t.Errorf("allowed tool did not run: %v", err)
	}
	if err := e.slack.WaitFor(func() bool {
		cur, _ := e.slack.Current(slackChan, card.TS)
		return len(cur.Buttons) == 0
	}, e2eWait); err != nil {
		t.Errorf("decided card still has buttons")
	}

	// Deny refuses the tool; the turn still ends with an answer.
	ts2 := e.slack.Mention(slackChan, alice, "[bash touch denied.txt]", "")
	card2 := e.waitCard(t, ts2)
	e.slack.Click(slackChan, card2.TS, alice, "deny", "")
	e.waitThreadText(t, ts2, "tool said")
	if _, err := os.Stat(filepath.Join(e.workdir, "denied.txt")); err == nil {
		t.Error("denied tool ran")
	}
	cur, _ := e.slack.Current(slackChan, card2.TS)
	if !strings.Contains(strings.ToLower(e.text(cur)), "denied") {
		t.Errorf("denied card does not say so: %q", e.text(cur))
	}
}

func TestSlackE2EStop(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "[slow 300] [slowms 100] tell me a long story", "")
	// Wait until the answer is streaming, then stop it.
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "long story")
	}); err != nil {
		t.Fatal(err)
	}
	// Wait until the answer shows in the thread (streamed), then stop it.
	if err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if p.ThreadTS == ts && p.Stream == slackfake.Streaming {
				return true
			}
		}
		return false
	}, e2eWait); err != nil {
		t.Fatalf("the answer never streamed: %v\n%s", err, e.dump())
	}
	e.slack.SendMessage(slackChan, alice, "!stop", ts)
	e.slack.SendMessage(slackChan, alice, "after the stop", ts)
	// The stream (300 × 100 ms = 30 s) was cut: the turn ended as stopped
	// (how long that takes is not asserted: a loaded machine may be slow).
	e.waitThreadText(t, ts, "⏹ Stopped.")
	e.waitThreadText(t, ts, "pong: after the stop")
}

func TestSlackE2ELongAnswerSplit(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "[long 9000]", "")
	// The footer closes the turn; wait for the last chunk, then check all.
	var chunks []slackfake.Message
	err := e.slack.WaitFor(func() bool {
		chunks = chunks[:0]
		total := 0
		for _, p := range e.slack.Posts() {
			if p.ThreadTS == ts && len(p.Buttons) == 0 {
				cur, _ := e.slack.Current(p.Channel, p.TS)
				chunks = append(chunks, cur)
				total += utf8.RuneCountInString(cur.Text)
			}
		}
		return total >= 9000
	}, e2eWait)
	if err != nil {
		t.Fatalf("long answer never fully arrived: %v\n%s", err, e.dump())
	}
	// The footer comes with the answer's last part, after the live
	// message's last edit (or the stream's stop).
	e.waitThreadText(t, ts, " · $")
	n := 0
	for _, p := range e.slack.Posts() {
		if p.ThreadTS != ts {
			continue
		}
		cur, _ := e.slack.Current(p.Channel, p.TS)
		n++
		if r := utf8.RuneCountInString(cur.Text); r > 4000 {
			t.Errorf("message %s has %d chars > 4000", p.TS, r)
		}
		if c := strings.Count(cur.Text, "```"); c%2 != 0 {
			t.Errorf("message %s has unbalanced fences (%d):\n%s", p.TS, c, cur.Text)
		}
	}
	if n < 3 {
		t.Errorf("9,000-char answer arrived in %d messages, want >= 3", n)
	}
}

func TestSlackE2ERateLimitAndDisconnect(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	e.slack.Inject429("chat.postMessage", 6)
	e.slack.Inject429("chat.update", 10)
	ts := e.slack.Mention(slackChan, alice, "through the storm", "")
	e.waitThreadText(t, ts, "pong: through the storm")

	// A disconnect envelope mid-turn loses nothing.
	e.slack.SendMessage(slackChan, alice, "[slow 30] mid-turn", ts)
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "mid-turn")
	}); err != nil {
		t.Fatal(err)
	}
	e.slack.Disconnect()
	e.slack.SendMessage(slackChan, alice, "sent while reconnecting", ts)
	e.waitThreadText(t, ts, "mid-turn")
	e.waitThreadText(t, ts, "sent while reconnecting")
	if e.slack.Connections() < 2 {
		t.Errorf("bridge did not reconnect: %d connections", e.slack.Connections())
	}
}

func TestSlackE2EBridgeCrashMidTurn(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "[slow 40] [slowms 100] survive the crash", "")
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "survive the crash")
	}); err != nil {
		t.Fatal(err)
	}
	e.bridge.kill9()
	// A message sent while the bridge is down waits in Slack's queue.
	e.slack.SendMessage(slackChan, alice, "sent while down", ts)
	restarted := time.Now()
	e.ab.restart(t)
	e.bridge = e.ab.bridge
	// Answered on its own, or together with the re-delivered message when
	// the new CLI reads both before its first turn starts (it connects to
	// the bridge's MCP server first; the CLI merges queued messages).
	e.waitThreadText(t, ts, "sent while down")
	// The interrupted message reached the model again after the restart.
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return r.Time.After(restarted) && strings.Contains(fakemodel.LastUserText(r), "survive the crash")
	}); err != nil {
		t.Errorf("the interrupted message was not re-delivered after the restart: %v", err)
	}
	// The interrupted message was re-delivered to the agent with a note.
	var told bool
	for _, r := range e.model.MessagesRequests() {
		for _, txt := range fakemodel.UserTexts(r) {
			if strings.Contains(strings.ToLower(txt), "interrupted") {
				told = true
			}
		}
	}
	if !told {
		t.Errorf("the agent was not told its previous turn was interrupted")
	}
}

func TestSlackE2EImageAttachment(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	// A 1x1 PNG.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\rIDATx\xdac\xfc\xcf\xc0P\x0f\x00\x04\x85\x01\x80\x84\xa9\x8c!\x00\x00\x00\x00IEND\xaeB`\x82")
	f := e.slack.AddFile("dot.png", "image/png", png)
	sent := e.slack.Send(slackfake.Msg{Channel: slackChan, User: alice, Text: "<@" + slackfake.BotUserID + "> what is in this picture?", Files: []slackfake.File{f}})
	e.waitThreadText(t, sent.TS, "pong: ")
	if e.slack.FileDownloads() == 0 {
		t.Fatal("the bridge never downloaded the attachment")
	}
	found := false
	for _, r := range e.model.MessagesRequests() {
		for _, m := range r.Messages {
			for _, b := range m.Blocks {
				found = found || b.Type == "image"
			}
		}
	}
	if !found {
		t.Error("no model request carried the image block")
	}
}

// TestSlackE2EAgentNeverSeesBridgeTokens: the bridge runs with the Slack
// tokens in its environment; a command run by the agent prints its own
// environment, which must hold neither token.
func TestSlackE2EAgentNeverSeesBridgeTokens(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "[bash env > agent-env.txt]", "")
	card := e.waitCard(t, ts)
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitThreadText(t, ts, "tool said")
	env, err := os.ReadFile(filepath.Join(e.workdir, "agent-env.txt"))
	if err != nil {
		t.Fatalf("the agent's command did not run: %v", err)
	}
	if !strings.Contains(string(env), "ANTHROPIC_BASE_URL=") {
		t.Fatalf("agent env lacks the profile's env; got:\n%s", env)
	}
	for _, secret := range []string{slackfake.BotToken, slackfake.AppToken, "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("the agent's environment contains %q", secret)
		}
	}
}

// TestSlackE2EQuestionCard: AskUserQuestion becomes a card with one button
// per option; the click answers the model.
func TestSlackE2EQuestionCard(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "[ask Which database should we use? | Postgres | SQLite]", "")
	card := e.waitCard(t, ts)
	if !strings.Contains(e.text(card), "Which database should we use?") {
		t.Errorf("question card lacks the question: %q", e.text(card))
	}
	var pick string
	for _, b := range card.Buttons {
		if strings.Contains(b.Text, "SQLite") {
			pick = b.ActionID
		}
	}
	if pick == "" {
		t.Fatalf("no SQLite button: %+v", card.Buttons)
	}
	e.slack.Click(slackChan, card.TS, alice, pick, "")
	e.waitThreadText(t, ts, "answer was:")
	for _, p := range e.slack.Posts() {
		cur, _ := e.slack.Current(p.Channel, p.TS)
		if p.ThreadTS == ts && strings.Contains(cur.Text, "answer was:") && !strings.Contains(cur.Text, "SQLite") {
			t.Errorf("the model's reply does not carry the chosen option: %q", cur.Text)
		}
	}
}
