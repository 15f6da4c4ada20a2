package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/discord/discordfake"
	"github.com/agentbridge/agentbridge/config"
)

// stranger is a Discord user the tests' access rules refuse.
const stranger = "u9"

// Access first: a stranger's mention starts no thread and reaches the core
// bare, keyed by the channel; their message in an owned thread reaches it
// bare too. The allowed user's mention still starts a thread, and a
// stranger's click is still acknowledged and handed to the core (which
// answers it privately).
func TestStrangerMentionStartsNoThread(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.mu.Lock()
	r.rec.refuse[stranger] = true
	r.rec.mu.Unlock()

	top := f.Send(discordfake.UserMessage{ChannelID: "100", GuildID: guild, UserID: stranger, MentionsBot: true,
		Content: "let me in", Attachments: []discordfake.Attachment{{Filename: "a.txt", ContentType: "text/plain", Data: []byte("x")}}})
	got := r.rec.waitMsg(t, top)
	if want := (bridges.ConversationKey{Bot: botName, Channel: "100"}); got.Key != want {
		t.Errorf("stranger's key = %+v, want %+v (no thread)", got.Key, want)
	}
	if got.Text != "" || got.UserName != "" || len(got.Files) != 0 || got.UserID != stranger {
		t.Errorf("a stranger's message carries %+v", got)
	}
	if th := f.Threads(); len(th) != 0 || f.RequestCount(discordfake.RouteStartThread) != 0 {
		t.Fatalf("a thread was started for a stranger: %+v", th)
	}

	first := f.SendMessage("100", guild, "u1", "start a task", true)
	key := r.rec.waitMsg(t, first).Key
	if th := f.Threads(); len(th) != 1 || th[0].MessageID != first || key.Thread != first {
		t.Fatalf("allowed user's mention: threads %+v, key %+v", th, key)
	}
	inThread := f.SendMessage(key.Thread, guild, stranger, "me too", false)
	if m := r.rec.waitMsg(t, inThread); m.Key != key || m.Text != "" {
		t.Errorf("stranger in an owned thread: %+v, want key %+v and no text", m, key)
	}

	card, err := r.Post(t.Context(), key, bridges.Message{Text: "allow?", CardID: "c1", Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	iid := f.Click(key.Thread, card.ID, stranger, "c:c1:allow")
	if act := r.rec.waitAction(t); act.UserID != stranger || act.Reply == nil {
		t.Errorf("stranger's click reached the core as %+v", act)
	}
	if rs := f.InteractionResponses(); len(rs) != 1 || rs[0].InteractionID != iid || rs[0].Type != discordfake.CallbackDeferredUpdate {
		t.Errorf("interaction responses = %+v, want the click's deferred update only", rs)
	}
	if n := len(f.BotMessages()); n != 1 {
		t.Errorf("bot posted %d messages, want the card only", n)
	}
}

// With the real core: a stranger gets no thread, no message, no typing and
// no interaction response, whether they mention the bot in a channel or
// write in a colleague's thread; the allowed user's mention creates a
// thread and is answered there.
func TestStrangerSilentWithCore(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	bot := testBot(f)
	bot.Access = config.Access{Users: []string{"u1"}}
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*config.Agent{"coder": {Name: "coder", Command: "claude", Workdir: t.TempDir(), MaxLive: 2,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{bot},
	}
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{botName: b}, nil)
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 }, wait); err != nil {
		t.Fatalf("gateway: %v", err)
	}
	for deadline := time.Now().Add(wait); b.BotUserID() != f.BotID(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("bot never became ready")
		}
	}

	f.SendMessage("100", guild, stranger, "let me in", true)
	first := f.SendMessage("100", guild, "u1", "build it", true)
	// Messages are handled in order: once u1 is answered, the stranger's
	// mention has been decided.
	if _, err := f.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == first && strings.Contains(m.Content, "pong: build it")
	}, wait); err != nil {
		t.Fatalf("allowed user not answered in a thread: %v", err)
	}
	f.SendMessage(first, guild, stranger, "and me?", false)
	core.Clock.Advance(time.Hour) // past any hourly limit
	f.SendMessage(first, guild, stranger, "an hour later", true)
	f.SendMessage(first, guild, "u1", "more", false)
	if _, err := f.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == first && strings.Contains(m.Content, "pong: more")
	}, wait); err != nil {
		t.Fatalf("allowed user's follow-up not answered: %v", err)
	}

	if th := f.Threads(); len(th) != 1 || th[0].MessageID != first {
		t.Errorf("threads = %+v, want u1's only", th)
	}
	for _, m := range f.BotMessages() {
		if m.ChannelID != first || !strings.Contains(m.Content, "pong: ") {
			t.Errorf("bot message for a stranger: %+v", m)
		}
	}
	for _, ty := range f.Typing() {
		if ty.ChannelID != first {
			t.Errorf("typing outside u1's thread: %+v", ty)
		}
	}
	if rs, fu := f.InteractionResponses(), f.Followups(); len(rs) != 0 || len(fu) != 0 {
		t.Errorf("interaction responses %+v, follow-ups %+v, want none", rs, fu)
	}
	for _, s := range core.Pool.Sessions() {
		for _, m := range s.Sent() {
			if strings.Contains(m.Text, "let me in") || strings.Contains(m.Text, "and me?") || strings.Contains(m.Text, "an hour later") {
				t.Errorf("a stranger's message reached the agent: %q", m.Text)
			}
		}
	}
}
