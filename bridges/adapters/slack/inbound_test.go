package slack

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// A channel mention starts a conversation keyed by the mention's ts; the
// envelope is acked only after HandleMessage returned; the app_mention
// twin of the message event is acked without a second delivery.
func TestMentionStartsThreadAndAcksAfterAccept(t *testing.T) {
	for _, mentionFirst := range []bool{false, true} {
		name := "message first"
		if mentionFirst {
			name = "app_mention first"
		}
		t.Run(name, func(t *testing.T) {
			e := startOnFake(t, slackfake.WithoutEcho())
			e.fake.AddUser(slackfake.User{ID: "U1", Name: "ann", DisplayName: "Ann"})
			gate := make(chan struct{})
			e.h.mu.Lock()
			e.h.gate = gate
			e.h.mu.Unlock()

			sent := e.fake.Send(slackfake.Msg{
				Channel: "C1", User: "U1", MentionFirst: mentionFirst,
				Text: "<@" + slackfake.BotUserID + "> fix &lt;this&gt; &amp; <https://example.com|that>",
			})
			if len(sent.Envelopes) != 2 {
				t.Fatalf("fake sent %d envelopes, want message + app_mention", len(sent.Envelopes))
			}
			// While the core has not accepted the message, nothing is acked.
			testkit.WaitUntil(t, "handler called", waitLong, func() bool {
				e.h.mu.Lock()
				defer e.h.mu.Unlock()
				return e.h.calls > 0
			})
			time.Sleep(300 * time.Millisecond)
			for _, id := range sent.Envelopes {
				if en, _ := e.fake.Envelope(id); en.Acked {
					t.Fatalf("envelope %s acked before HandleMessage returned", id)
				}
			}
			close(gate)
			e.waitAcked(t, sent.TS)

			msgs := e.h.messages()
			if len(msgs) != 1 {
				t.Fatalf("HandleMessage accepted %d messages, want 1: %+v", len(msgs), msgs)
			}
			m := msgs[0]
			wantKey := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: sent.TS}
			if m.Key != wantKey {
				t.Errorf("key = %v, want %v", m.Key, wantKey)
			}
			if want := "fix <this> & [that](https://example.com)"; m.Text != want {
				t.Errorf("text = %q, want %q", m.Text, want)
			}
			if m.UserID != "U1" || m.UserName != "Ann" || m.MsgID != "C1:"+sent.TS || m.At.IsZero() {
				t.Errorf("inbound = %+v", m)
			}
			e.h.mu.Lock()
			returned := e.h.returned[0]
			e.h.mu.Unlock()
			for _, id := range sent.Envelopes {
				en, _ := e.fake.Envelope(id)
				if en.AckedAt.Before(returned) {
					t.Errorf("envelope %s acked at %v, before HandleMessage returned at %v", id, en.AckedAt, returned)
				}
			}
		})
	}
}

// Slack resends an envelope it thinks was not acked: it is acked again
// but reaches the core once.
func TestRetryOfSameEnvelopeHandledOnce(t *testing.T) {
	e := startOnFake(t)
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "hello"})
	e.waitAcked(t, sent.TS)
	retry := e.fake.Resend(sent.Envelopes[0])
	if _, err := e.fake.WaitForAck(retry, waitLong); err != nil {
		t.Fatal(err)
	}
	if en, _ := e.fake.Envelope(retry); en.Retry != 1 {
		t.Errorf("retry envelope has retry_attempt %d, want 1", en.Retry)
	}
	if got := len(e.h.messagesFor(sent.TS)); got != 1 {
		t.Errorf("message delivered %d times, want 1", got)
	}
}

// When the core fails to accept a message the envelope is not acked, so
// Slack's retry delivers it again.
func TestHandlerErrorLeavesEnvelopeUnacked(t *testing.T) {
	e := startOnFake(t)
	e.h.mu.Lock()
	e.h.failNext = 1
	e.h.mu.Unlock()
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "hello"})
	testkit.WaitUntil(t, "first attempt", waitLong, func() bool {
		e.h.mu.Lock()
		defer e.h.mu.Unlock()
		return e.h.calls == 1
	})
	retry := e.fake.Resend(sent.Envelopes[0])
	if _, err := e.fake.WaitForAck(retry, waitLong); err != nil {
		t.Fatal(err)
	}
	// Envelopes are handled and acked in order: the retry's ack is there,
	// so an ack of the first attempt would be too.
	if en, _ := e.fake.Envelope(sent.Envelopes[0]); en.Acked {
		t.Fatal("envelope acked although HandleMessage failed")
	}
	if got := len(e.h.messagesFor(sent.TS)); got != 1 {
		t.Errorf("message accepted %d times, want 1", got)
	}
}

func TestRouting(t *testing.T) {
	e := startOnFake(t)
	mention := e.fake.Mention("C1", "U1", "start", "")
	e.waitAcked(t, mention)
	owned := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: mention}

	tests := []struct {
		name    string
		msg     slackfake.Msg
		wantKey *bridges.ConversationKey // nil: not delivered
		want    string
	}{
		{name: "follow-up in owned thread without mention", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "more", ThreadTS: mention}, wantKey: &owned, want: "more"},
		{name: "thread_broadcast in owned thread", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "also to channel", ThreadTS: mention, Subtype: "thread_broadcast"}, wantKey: &owned, want: "also to channel"},
		{name: "other thread without mention", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "not for the bot", ThreadTS: "1.000001"}},
		{name: "mention inside another thread adopts it", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "<@" + slackfake.BotUserID + "> help here", ThreadTS: "1.000002"},
			wantKey: &bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "1.000002"}, want: "help here"},
		{name: "top-level chatter", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "lunch?"}},
		{name: "other bot in owned thread", msg: slackfake.Msg{Channel: "C1", User: "U9", BotID: "B9", Text: "beep", ThreadTS: mention}},
		{name: "bot_message subtype", msg: slackfake.Msg{Channel: "C1", User: "U9", Subtype: "bot_message", Text: "beep", ThreadTS: mention}},
		{name: "own message", msg: slackfake.Msg{Channel: "C1", User: slackfake.BotUserID, Text: "echo", ThreadTS: mention}},
		{name: "edit", msg: slackfake.Msg{Channel: "C1", User: "U2", Subtype: "message_changed", Text: "edited", ThreadTS: mention}},
		{name: "delete", msg: slackfake.Msg{Channel: "C1", User: "U2", Subtype: "message_deleted", ThreadTS: mention}},
		{name: "channel join", msg: slackfake.Msg{Channel: "C1", User: "U2", Subtype: "channel_join", Text: "<@U2> has joined"}},
		{name: "DM top level shares one conversation", msg: slackfake.Msg{Channel: "D1", User: "U1", Text: "hi"},
			wantKey: &bridges.ConversationKey{Bot: "team", Channel: "D1"}, want: "hi"},
		{name: "DM thread is its own conversation", msg: slackfake.Msg{Channel: "D1", User: "U1", Text: "in thread", ThreadTS: "2.000001"},
			wantKey: &bridges.ConversationKey{Bot: "team", Channel: "D1", Thread: "2.000001"}, want: "in thread"},
		{name: "group DM needs a mention", msg: slackfake.Msg{Channel: "G1", User: "U1", Text: "hello all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := e.fake.Send(tt.msg)
			e.waitAcked(t, sent.TS)
			got := e.h.messagesFor(sent.TS)
			if tt.wantKey == nil {
				if len(got) != 0 {
					t.Fatalf("delivered %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("delivered %d times, want once", len(got))
			}
			if got[0].Key != *tt.wantKey || got[0].Text != tt.want {
				t.Errorf("got key %v text %q, want %v %q", got[0].Key, got[0].Text, *tt.wantKey, tt.want)
			}
		})
	}
}

// The bot's own posts come back as events (the fake echoes them like
// Slack) and must not reach the core.
func TestOwnPostsIgnored(t *testing.T) {
	e := startOnFake(t) // echo on
	ts := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, ts)
	key := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: ts}
	ref, err := e.b.Post(t.Context(), key, bridges.Message{Text: "working on it"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.b.Edit(t.Context(), ref, bridges.Message{Text: "done"}); err != nil {
		t.Fatal(err)
	}
	e.waitAcked(t, ref.ID) // the echo of the post
	testkit.WaitUntil(t, "all envelopes acked", waitLong, func() bool {
		for _, en := range e.fake.Envelopes() {
			if !en.Acked {
				return false
			}
		}
		return len(e.fake.Envelopes()) >= 4
	})
	if got := len(e.h.messages()); got != 1 {
		t.Errorf("core got %d messages, want only the user's one", got)
	}
}

func TestTSTime(t *testing.T) {
	got := tsTime("1700000000.000123")
	if want := time.Unix(1700000000, 123000); !got.Equal(want) {
		t.Errorf("tsTime = %v, want %v", got, want)
	}
	if !tsTime("garbage").IsZero() {
		t.Error("bad ts should give the zero time")
	}
}

func TestUserCache(t *testing.T) {
	t.Parallel()
	lookups := map[string]int{}
	lookup := func(_ context.Context, id string) (string, error) {
		lookups[id]++
		if id == "Ubad" {
			return "", errors.New("users.info: user_not_found")
		}
		return "name of " + id, nil
	}
	tests := []struct {
		name    string
		cap     int
		ttl     time.Duration
		ids     []string // looked up in this order
		want    string   // name of the last id
		lookups map[string]int
	}{
		{"cached", 4, time.Hour, []string{"U1", "U1", "U1"}, "name of U1", map[string]int{"U1": 1}},
		{"failure falls back to the id", 4, time.Hour, []string{"Ubad", "Ubad"}, "Ubad", map[string]int{"Ubad": 1}},
		{"least recently used forgotten", 2, time.Hour, []string{"U1", "U2", "U1", "U3", "U1", "U2"}, "name of U2", map[string]int{"U1": 1, "U2": 2, "U3": 1}},
		{"expired", 4, 0, []string{"U1", "U1"}, "name of U1", map[string]int{"U1": 2}},
		{"empty id", 4, time.Hour, []string{""}, "", map[string]int{}},
	}
	for _, tt := range tests {
		clear(lookups)
		c := newUserCache(tt.cap, tt.ttl)
		var got string
		for _, id := range tt.ids {
			got = c.Name(t.Context(), id, lookup)
		}
		if got != tt.want {
			t.Errorf("%s: name = %q, want %q", tt.name, got, tt.want)
		}
		if len(lookups) != len(tt.lookups) {
			t.Errorf("%s: lookups = %v, want %v", tt.name, lookups, tt.lookups)
		}
		for id, n := range tt.lookups {
			if lookups[id] != n {
				t.Errorf("%s: lookups = %v, want %v", tt.name, lookups, tt.lookups)
				break
			}
		}
	}
}

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
	e := startOnFake(t)
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
	testkit.WaitUntil(t, "the stranger's click at the core", waitLong, func() bool {
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
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	bot := botConfig(fake.URL(), slackfake.BotToken)
	bot.Access = access
	cfg := bridgetest.Config(t, bot)
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

// A mention in a colleague's thread (one the bot did not start) gives the
// agent the thread's parent message, author, text and file, read once
// with conversations.replies; the file is fetched like the message's own,
// under the same cap. A stranger's mention reads nothing and carries
// nothing; a mention in the bot's own thread reads nothing.
func TestMentionInForeignThreadQuotesParent(t *testing.T) {
	e := startOnFake(t)
	e.fake.AddUser(slackfake.User{ID: "U2", Name: "grace", DisplayName: "Grace"})
	e.h.mu.Lock()
	e.h.refuse[stranger] = true
	e.h.mu.Unlock()
	content := bytes.Repeat([]byte("x"), 1000)
	f := e.fake.AddFile("graph.png", "image/png", content)
	parent := e.fake.Send(slackfake.Msg{Channel: "C1", User: "U2", Text: "deploy graph &amp; notes", Files: []slackfake.File{f}}).TS

	strangerTS := e.fake.Mention("C1", stranger, "what is this?", parent)
	e.waitAcked(t, strangerTS)
	if m := e.h.messagesFor(strangerTS); len(m) != 1 || m[0].Quoted != "" || len(m[0].Files) != 0 || m[0].ReplyTo != "" {
		t.Fatalf("a stranger's mention carries %+v", m)
	}
	if n := e.fake.CallCount("conversations.replies"); n != 0 {
		t.Fatalf("conversations.replies called %d times for a stranger", n)
	}

	ts := e.fake.Mention("C1", "U1", "summarise this", parent)
	e.waitAcked(t, ts)
	msgs := e.h.messagesFor(ts)
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	m := msgs[0]
	if m.Text != "summarise this" || m.ReplyTo != "C1:"+parent {
		t.Errorf("text %q, reply to %q", m.Text, m.ReplyTo)
	}
	if want := "Grace wrote:\n[graph.png, attached as quoted-graph.png]\ndeploy graph & notes"; m.Quoted != want {
		t.Errorf("quoted = %q, want %q", m.Quoted, want)
	}
	if len(m.Files) != 1 || m.Files[0].Name != "quoted-graph.png" || m.Files[0].Size != 1000 {
		t.Fatalf("files = %+v, want the parent's file", m.Files)
	}
	if data, err := e.b.FetchFile(t.Context(), m.Files[0], 1000); err != nil || !bytes.Equal(data, content) {
		t.Errorf("FetchFile(quoted) = %d bytes, %v", len(data), err)
	}
	if _, err := e.b.FetchFile(t.Context(), m.Files[0], 999); !errors.Is(err, ErrFileTooLarge) {
		t.Errorf("FetchFile(quoted) over the cap = %v, want ErrFileTooLarge", err)
	}

	// The thread is now the bot's: a later mention reads nothing.
	again := e.fake.Mention("C1", "U1", "and now?", parent)
	e.waitAcked(t, again)
	if m := e.h.messagesFor(again); len(m) != 1 || m[0].Quoted != "" {
		t.Errorf("mention in the bot's own thread: %+v", m)
	}
	if n := e.fake.CallCount("conversations.replies"); n != 1 {
		t.Errorf("conversations.replies called %d times, want 1", n)
	}
}

// A shared (forwarded) message and a message link unfurl carry the shared
// text, author and files: they reach the agent as quoted.
func TestSharedMessageIsQuoted(t *testing.T) {
	e := startOnFake(t)
	f := e.fake.AddFile("spec.pdf", "application/pdf", []byte("%PDF-1.4"))
	tests := []struct {
		name   string
		shared slackfake.Shared
		want   string
		files  int
	}{
		{"share", slackfake.Shared{AuthorID: "U2", AuthorName: "Grace", Text: "the spec is final", Files: []slackfake.File{f}},
			"Grace wrote:\n[spec.pdf, attached as quoted-spec.pdf]\nthe spec is final", 1},
		{"unfurl", slackfake.Shared{AuthorID: "U3", AuthorName: "Linus", Text: "ship it &lt;today&gt;", Unfurl: true},
			"Linus wrote:\nship it <today>", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := tc.shared
			ts := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "summarise this", Shared: &sh}).TS
			e.waitAcked(t, ts)
			msgs := e.h.messagesFor(ts)
			if len(msgs) != 1 {
				t.Fatalf("messages = %+v", msgs)
			}
			if msgs[0].Text != "summarise this" || msgs[0].Quoted != tc.want || len(msgs[0].Files) != tc.files {
				t.Errorf("got text %q, quoted %q, files %+v; want quoted %q and %d files", msgs[0].Text, msgs[0].Quoted, msgs[0].Files, tc.want, tc.files)
			}
		})
	}
}

// With the real core: a mention in a colleague's thread gives the agent
// the thread's parent marked as quoted, before the author's own words.
func TestForeignThreadParentToAgentWithCore(t *testing.T) {
	e := startWithCore(t, config.Access{Users: []string{"U1"}})
	e.fake.AddUser(slackfake.User{ID: "U2", Name: "grace", DisplayName: "Grace"})
	parent := e.fake.SendMessage("C1", "U2", "the build is red since Monday\nsee CI", "")
	ts := e.fake.Mention("C1", "U1", "summarise this", parent)
	if _, err := e.fake.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == parent && strings.Contains(m.Text, "pong: ")
	}, waitLong); err != nil {
		t.Fatalf("mention %s not answered in the thread: %v", ts, err)
	}
	want := "[Replying to this message]\n> Grace wrote:\n> the build is red since Monday\n> see CI\n\nsummarise this"
	var texts []string
	for _, s := range e.core.Pool.Sessions() {
		for _, m := range s.Sent() {
			texts = append(texts, m.Text)
		}
	}
	if len(texts) != 1 || texts[0] != want {
		t.Errorf("agent got %q, want %q", texts, want)
	}
}
