package slack

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/slack/slackfake"
	"github.com/agentbridge/agentbridge/config"
)

// stranger is a Slack user the tests' access rules refuse.
const stranger = "U9"

// usersInfoFor counts users.info calls about user.
func usersInfoFor(fake *slackfake.Server, user string) int {
	n := 0
	for _, c := range fake.Calls() {
		if c.Method == "users.info" && c.Params.Get("user") == user {
			n++
		}
	}
	return n
}

// A stranger's message reaches the core bare and causes nothing first: a
// top-level mention starts no thread (it is keyed by the channel), no name
// is looked up, no file is passed on, and the working indicator never lands
// on it. Their clicks still reach the core, which answers them privately.
func TestStrangerMessageReachesCoreBare(t *testing.T) {
	e := start(t)
	e.h.mu.Lock()
	e.h.refuse[stranger] = true
	e.h.mu.Unlock()
	e.fake.FailMethod("assistant.threads.setStatus", "channel_type_not_supported", -1)

	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	f := e.fake.AddFile("secret.txt", "text/plain", []byte("x"))
	top := e.fake.Send(slackfake.Msg{Channel: "C1", User: stranger, Files: []slackfake.File{f},
		Text: "<@" + slackfake.BotUserID + "> let me in <@U1>"}).TS
	e.waitAcked(t, top)
	inThread := e.fake.SendMessage("C1", stranger, "me too", root)
	e.waitAcked(t, inThread)

	tests := []struct {
		name string
		ts   string
		key  bridges.ConversationKey
	}{
		{"top-level mention", top, bridges.ConversationKey{Bot: "team", Channel: "C1"}},
		{"message in an owned thread", inThread, threadKey(root)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.h.messagesFor(tt.ts)
			if len(got) != 1 {
				t.Fatalf("HandleMessage got %d messages, want 1", len(got))
			}
			m := got[0]
			if m.Key != tt.key || m.UserID != stranger || m.MsgID != "C1:"+tt.ts {
				t.Errorf("inbound key %s user %q id %q, want key %s", m.Key, m.UserID, m.MsgID, tt.key)
			}
			if m.Text != "" || m.UserName != "" || len(m.Files) != 0 {
				t.Errorf("a stranger's message carries text %q, name %q, files %+v", m.Text, m.UserName, m.Files)
			}
		})
	}
	if n := usersInfoFor(e.fake, stranger); n != 0 {
		t.Errorf("the stranger was looked up %d times", n)
	}
	if err := e.b.SetTyping(t.Context(), threadKey(root), true); err != nil {
		t.Fatal(err)
	}
	if e.fake.HasReaction("C1", inThread, workingReaction) || !e.fake.HasReaction("C1", root, workingReaction) {
		t.Errorf("working reaction not on the allowed user's message: %+v", e.fake.Reactions())
	}
	if p := e.fake.Posts(); len(p) != 0 || e.fake.FileDownloads() != 0 {
		t.Errorf("adapter posted %+v or downloaded %d files by itself", p, e.fake.FileDownloads())
	}

	card, err := e.b.Post(t.Context(), threadKey(root), bridges.Message{Text: "allow?", CardID: "c1",
		Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Click("C1", card.ID, stranger, "allow", "")
	waitUntil(t, waitLong, "the stranger's click at the core", func() bool {
		return slices.ContainsFunc(e.h.actionList(), func(a bridges.Action) bool { return a.UserID == stranger && a.Reply != nil })
	})
}

// coreEnv is the Slack adapter run by a real core (fake agents that answer
// "pong: TEXT"), with access for bot "team" as given.
type coreEnv struct {
	fake *slackfake.Server
	core *bridgetest.Core
}

func startWithCore(t *testing.T, access config.Access) *coreEnv {
	t.Helper()
	fake := slackfake.New(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	bot := botConfig(fake.URL(), slackfake.BotToken)
	bot.Access = access
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*config.Agent{"coder": {Name: "coder", Command: "claude", Workdir: t.TempDir(), MaxLive: 2,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{bot},
	}
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{bot.Name: b}, nil)
	if err := fake.WaitForConnections(1, waitLong); err != nil {
		t.Fatal(err)
	}
	return &coreEnv{fake: fake, core: core}
}

// waitAcked waits until every envelope about ts is acked (the core has
// decided about the message).
func (e *coreEnv) waitAcked(t *testing.T, ts string) {
	t.Helper()
	if err := e.fake.WaitFor(func() bool {
		envs := e.fake.EnvelopesFor(ts)
		return len(envs) > 0 && !slices.ContainsFunc(envs, func(en slackfake.Envelope) bool { return !en.Acked })
	}, waitLong); err != nil {
		t.Fatalf("envelopes of %s not acked: %v", ts, err)
	}
}

// With the real core: a stranger's mention gets one ephemeral notice in
// the channel and nothing public (no post, no thread status, no reaction);
// more messages within the hour, in the channel or in a colleague's
// thread, get nothing; an hour later the next one gets a notice again,
// where it was written. The allowed user is answered as usual.
func TestStrangerGetsOneEphemeralAnHour(t *testing.T) {
	e := startWithCore(t, config.Access{Users: []string{"U1"}})

	top := e.fake.Mention("C1", stranger, "let me in", "")
	e.waitAcked(t, top)
	eph, err := e.fake.WaitForEphemeral(nil, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	if eph.Channel != "C1" || eph.User != stranger || eph.ThreadTS != "" || eph.Text == "" {
		t.Errorf("ephemeral = %+v, want one to %s in C1 outside any thread", eph, stranger)
	}
	e.waitAcked(t, e.fake.Mention("C1", stranger, "hello?", ""))

	root := e.fake.Mention("C1", "U1", "build it", "")
	if _, err := e.fake.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == root && strings.Contains(m.Text, "pong: build it")
	}, waitLong); err != nil {
		t.Fatal(err)
	}
	e.waitAcked(t, e.fake.SendMessage("C1", stranger, "and me?", root))
	if n := len(e.fake.Ephemerals()); n != 1 {
		t.Fatalf("%d ephemerals within the hour, want 1: %+v", n, e.fake.Ephemerals())
	}

	e.core.Clock.Advance(time.Hour)
	later := e.fake.SendMessage("C1", stranger, "an hour later", root)
	e.waitAcked(t, later)
	eph2, err := e.fake.WaitForEphemeral(func(m slackfake.Ephemeral) bool { return m.ThreadTS == root }, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	if eph2.User != stranger || eph2.Channel != "C1" {
		t.Errorf("second ephemeral = %+v", eph2)
	}
	if n := len(e.fake.Ephemerals()); n != 2 {
		t.Errorf("%d ephemerals in all, want 2", n)
	}

	for _, p := range e.fake.Posts() {
		if p.ThreadTS != root {
			t.Errorf("public post outside the allowed user's thread: %+v", p)
		}
		if strings.Contains(p.Text, "access") || strings.Contains(p.Text, "allowed") {
			t.Errorf("public refusal: %q", p.Text)
		}
	}
	for _, s := range e.fake.Statuses() {
		if s.ThreadTS != root {
			t.Errorf("thread status for a stranger: %+v", s)
		}
	}
	for _, r := range e.fake.Reactions() {
		if r.TS != root {
			t.Errorf("reaction on a stranger's message: %+v", r)
		}
	}
	if n := usersInfoFor(e.fake, stranger); n != 0 {
		t.Errorf("the stranger was looked up %d times", n)
	}
	for _, s := range e.core.Pool.Sessions() {
		for _, m := range s.Sent() {
			if strings.Contains(m.Text, "let me in") || strings.Contains(m.Text, "and me?") {
				t.Errorf("a stranger's message reached the agent: %q", m.Text)
			}
		}
	}
}
