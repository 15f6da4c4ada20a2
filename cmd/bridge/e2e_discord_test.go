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
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

const (
	dGuild    = "900000000000000001"
	dChannel  = "900000000000000002"
	dAlice    = "900000000000000011"
	dStranger = "900000000000000066"
)

type discordEnv struct {
	dc      *discordfake.Fake
	model   *fakemodel.Server
	bridge  *bridgeProc
	workdir string
}

func startDiscordBridge(t *testing.T) *discordEnv {
	t.Helper()
	return startDiscordBridgeWith(t, "")
}

// startDiscordBridgeWith is startDiscordBridge with more keys for the bot
// (YAML lines, each indented by four spaces, e.g. "    verbosity: quiet\n").
func startDiscordBridgeWith(t *testing.T, botExtra string) *discordEnv {
	t.Helper()
	return startDiscordBridgeOpts(t, profileOptions{}, botExtra)
}

// startDiscordBridgeOpts is startDiscordBridgeWith with a varied profile
// and top-level keys (profileOptions.top).
func startDiscordBridgeOpts(t *testing.T, po profileOptions, botExtra string) *discordEnv {
	t.Helper()
	dc := discordfake.New(t)
	ab := startAgentBridgeWith(t, po, fmt.Sprintf(`bots:
  - name: guild
    platform: discord
    agent: coder
    discord: { token: "${DISCORD_BOT_TOKEN}", api_url: %q }
%s    access:
      users: [%q]
`, dc.URL(), botExtra, dAlice), "DISCORD_BOT_TOKEN="+dc.Token())
	if err := dc.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live > 0 }, e2eWait); err != nil {
		t.Fatalf("bridge never got READY: %v", err)
	}
	t.Cleanup(func() {
		if strings.Contains(ab.bridge.logs.String(), dc.Token()) {
			t.Errorf("bridge logs contain the Discord token")
		}
	})
	return &discordEnv{dc: dc, model: ab.model, bridge: ab.bridge, workdir: ab.workdir}
}

// startThread mentions the bot in the guild channel and returns the thread id.
func (e *discordEnv) startThread(t *testing.T, text string) string {
	t.Helper()
	id := e.dc.SendMessage(dChannel, dGuild, dAlice, "<@"+e.dc.BotID()+"> "+text, true)
	if err := e.dc.Wait(e2eWait, func() bool {
		for _, th := range e.dc.Threads() {
			if th.MessageID == id {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("no thread started on %s: %v", id, err)
	}
	return id // a thread started on a message has the message's id
}

func (e *discordEnv) waitText(t *testing.T, thread, want string) discordfake.Message {
	t.Helper()
	m, err := e.dc.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == thread && m.AuthorIsBot && strings.Contains(m.Text, want)
	}, e2eWait)
	if err != nil {
		t.Fatalf("thread %s never showed %q: %v\n%s", thread, want, err, e.dump(thread))
	}
	return m
}

func (e *discordEnv) dump(thread string) string {
	var b strings.Builder
	for _, m := range e.dc.Messages(thread) {
		fmt.Fprintf(&b, "\n[%s bot=%v buttons=%d] %q", m.ID, m.AuthorIsBot, len(m.Buttons()), m.Text)
	}
	return b.String()
}

func (e *discordEnv) waitCard(t *testing.T, thread string) discordfake.Message {
	t.Helper()
	m, err := e.dc.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == thread && len(m.Buttons()) > 0
	}, e2eWait)
	if err != nil {
		t.Fatalf("no card in thread %s: %v\n%s", thread, err, e.dump(thread))
	}
	return m
}

func customID(t *testing.T, m discordfake.Message, choice string) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.HasSuffix(b.CustomID, ":"+choice) {
			return b.CustomID
		}
	}
	t.Fatalf("card has no %q button: %+v", choice, m.Buttons())
	return ""
}

// clickAndCheckAck clicks and asserts the interaction was acknowledged in < 3 s.
func (e *discordEnv) clickAndCheckAck(t *testing.T, thread, msgID, user, cid string) {
	t.Helper()
	iid := e.dc.Click(thread, msgID, user, cid)
	var resp discordfake.InteractionResponse
	if err := e.dc.Wait(e2eWait, func() bool {
		for _, r := range e.dc.InteractionResponses() {
			if r.InteractionID == iid {
				resp = r
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("interaction %s never acknowledged: %v", iid, err)
	}
	if resp.Late || resp.Latency() >= 3*time.Second {
		t.Errorf("interaction acknowledged after %v (late=%v), want < 3s", resp.Latency(), resp.Late)
	}
}

func TestDiscordE2EConversation(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	thread := e.startThread(t, "hello discord")
	e.waitText(t, thread, "pong: hello discord")
	var name string
	for _, th := range e.dc.Threads() {
		if th.ID == thread {
			name = th.Name
		}
	}
	if !strings.Contains(name, "hello") {
		t.Errorf("thread name %q is not from the message's first words", name)
	}
	e.dc.SendMessage(thread, dGuild, dAlice, "[echo-history] and now?", false)
	e.waitText(t, thread, "history: hello discord")
	sessions := map[string]bool{}
	for _, r := range e.model.MessagesRequests() {
		if id := r.Header.Get("X-Claude-Code-Session-Id"); id != "" {
			sessions[id] = true
		}
	}
	if len(sessions) != 1 {
		t.Errorf("the thread used %d Claude sessions, want 1", len(sessions))
	}
}

func TestDiscordE2EApprovals(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	thread := e.startThread(t, "[bash touch allowed.txt]")
	card := e.waitCard(t, thread)
	if !card.V2 || card.Content != "" || !strings.Contains(card.Text, "touch allowed.txt") {
		t.Errorf("card = %+v, want a Components V2 message showing the command", card)
	}

	// A stranger's click is acknowledged, refused ephemerally, and decides nothing.
	e.clickAndCheckAck(t, thread, card.ID, dStranger, customID(t, card, "allow"))
	if err := e.dc.Wait(e2eWait, func() bool {
		for _, f := range e.dc.Followups() {
			if f.Ephemeral() {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("stranger got no ephemeral refusal: %v", err)
	}
	// The refusal is the core's decision on the click: the card is as it was.
	if m, _ := e.dc.Message(card.ID); len(m.Buttons()) == 0 {
		t.Fatalf("a stranger's click decided the card: %q", m.Text)
	}

	e.clickAndCheckAck(t, thread, card.ID, dAlice, customID(t, card, "allow"))
	e.waitText(t, thread, "tool said")
	if _, err := os.Stat(filepath.Join(e.workdir, "allowed.txt")); err != nil {
		t.Errorf("allowed tool did not run: %v", err)
	}

	e.dc.SendMessage(thread, dGuild, dAlice, "[bash touch denied.txt]", false)
	var card2 discordfake.Message
	m, err := e.dc.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == thread && m.ID != card.ID && len(m.Buttons()) > 0
	}, e2eWait)
	if err != nil {
		t.Fatalf("no second card: %v\n%s", err, e.dump(thread))
	}
	card2 = m
	e.clickAndCheckAck(t, thread, card2.ID, dAlice, customID(t, card2, "deny"))
	if err := e.dc.Wait(e2eWait, func() bool {
		m, _ := e.dc.Message(card2.ID)
		return len(m.Buttons()) == 0 && m.V2 && strings.Contains(strings.ToLower(m.Text), "denied")
	}); err != nil {
		m, _ := e.dc.Message(card2.ID)
		t.Fatalf("denied card not updated: %q", m.Text)
	}
	// The turn's answer after the denial: the tool call is over.
	if err := e.dc.Wait(e2eWait, func() bool {
		n := 0
		for _, m := range e.dc.Messages(thread) {
			if m.AuthorIsBot && strings.Contains(m.Content, "tool said") {
				n++
			}
		}
		return n >= 2
	}); err != nil {
		t.Fatalf("no answer after the denial: %v\n%s", err, e.dump(thread))
	}
	if _, err := os.Stat(filepath.Join(e.workdir, "denied.txt")); err == nil {
		t.Error("denied tool ran")
	}
}

// TestDiscordE2ELongAnswer: a 5,000-character answer arrives in two
// messages, not three: each longer than an ordinary message's 2,000
// characters is one Components V2 message of at most 4,000 (no content),
// code fences balanced in each.
func TestDiscordE2ELongAnswer(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	thread := e.startThread(t, "[long 5000]")
	if err := e.dc.Wait(e2eWait, func() bool {
		total := 0
		for _, m := range e.dc.Messages(thread) {
			if m.AuthorIsBot {
				total += utf8.RuneCountInString(m.Text)
			}
		}
		return total >= 5000
	}); err != nil {
		t.Fatalf("long answer never fully arrived: %v\n%s", err, e.dump(thread))
	}
	// The footer comes with the answer's last part, after the live
	// message's last edit.
	e.waitText(t, thread, " · $")
	n, v2 := 0, 0
	for _, m := range e.dc.Messages(thread) {
		if !m.AuthorIsBot {
			continue
		}
		n++
		r := utf8.RuneCountInString(m.Text)
		switch {
		case m.V2:
			v2++
			if r > 4000 || m.Content != "" {
				t.Errorf("V2 message %s: %d characters of text, content %.20q", m.ID, r, m.Content)
			}
		case r > 2000:
			t.Errorf("ordinary message %s has %d chars > 2000", m.ID, r)
		}
		if c := strings.Count(m.Text, "```"); c%2 != 0 {
			t.Errorf("message %s has unbalanced fences:\n%s", m.ID, m.Text)
		}
	}
	if n != 2 || v2 < 1 {
		t.Errorf("5,000-char answer arrived in %d messages (%d Components V2), want 2 with at least one V2\n%s", n, v2, e.dump(thread))
	}
}

func TestDiscordE2EReconnectMidTurn(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	thread := e.startThread(t, "[slow 30] before the reconnect")
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "before the reconnect")
	}); err != nil {
		t.Fatal(err)
	}
	e.dc.Reconnect()
	e.dc.SendMessage(thread, dGuild, dAlice, "during the reconnect", false)
	e.waitText(t, thread, "before the reconnect")
	e.waitText(t, thread, "pong: during the reconnect")
	count := 0
	for _, r := range e.model.MessagesRequests() {
		if strings.Contains(fakemodel.LastUserText(r), "during the reconnect") {
			count++
		}
	}
	if count != 1 {
		t.Errorf("message sent during the reconnect reached the model %d times, want 1", count)
	}
}

func TestDiscordE2EDirectMessage(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	const dm = "900000000000000050"
	e.dc.SendMessage(dm, "", dAlice, "hello without a mention", false)
	e.waitText(t, dm, "pong: hello without a mention")
	e.dc.SendMessage(dm, "", dAlice, "[echo-history] again", false)
	e.waitText(t, dm, "history: hello without a mention")
	if n := len(e.dc.Threads()); n != 0 {
		t.Errorf("a DM started %d threads", n)
	}
}
