package discord

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
)

func TestMentionStartsThread(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)

	id := f.SendMessage("100", guild, "u1", "please review the failing build on main", true)
	got := r.rec.waitMsg(t, id)

	want := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: id}
	if got.Key != want {
		t.Errorf("key = %+v, want %+v", got.Key, want)
	}
	if got.Text != "please review the failing build on main" {
		t.Errorf("text = %q (mention not stripped?)", got.Text)
	}
	if got.UserID != "u1" || got.UserName != "useru1" {
		t.Errorf("user = %q/%q", got.UserID, got.UserName)
	}
	if got.At.IsZero() {
		t.Error("At is zero")
	}
	threads := f.Threads()
	if len(threads) != 1 {
		t.Fatalf("threads = %+v, want one", threads)
	}
	th := threads[0]
	if th.ParentID != "100" || th.MessageID != id || th.Name != "please review the failing build on main" {
		t.Errorf("thread = %+v", th)
	}
}

func TestThreadFollowUps(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)

	first := f.SendMessage("100", guild, "u1", "start a task", true)
	thread := r.rec.waitMsg(t, first).Key.Thread
	// A thread a user made, which the bot does not own.
	f.AddChannel("300", guild, "100", discordfake.ChannelPublicThread, "someone else's thread")

	tests := []struct {
		name      string
		channel   string
		mention   bool
		delivered bool
		key       bridges.ConversationKey
	}{
		{"owned thread without mention", thread, false, true, bridges.ConversationKey{Bot: botName, Channel: "100", Thread: thread}},
		{"foreign thread without mention", "300", false, false, bridges.ConversationKey{}},
		{"foreign thread with mention", "300", true, true, bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "300"}},
		{"channel without mention", "100", false, false, bridges.ConversationKey{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := f.SendMessage(tc.channel, guild, "u1", "more: "+tc.name, tc.mention)
			// Messages are handled in order: once a later DM arrives, this
			// one has been decided.
			sentinel := f.SendMessage("dm-"+tc.name, "", "u9", "sentinel", false)
			r.rec.waitMsg(t, sentinel)
			n := countIDs(r.rec.messages())[id]
			if tc.delivered != (n == 1) || n > 1 {
				t.Fatalf("delivered %d times, want delivered=%v", n, tc.delivered)
			}
			if tc.delivered {
				if got := r.rec.waitMsg(t, id); got.Key != tc.key || got.Text != "more: "+tc.name {
					t.Errorf("got %+v, want key %+v", got, tc.key)
				}
			}
		})
	}
	if n := len(f.Threads()); n != 1 {
		t.Errorf("threads started = %d, want 1 (no thread inside a thread)", n)
	}
}

func TestDirectMessageNeedsNoMention(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)

	id := f.SendMessage("dm1", "", "u2", "what is the status?", false)
	got := r.rec.waitMsg(t, id)
	if want := (bridges.ConversationKey{Bot: botName, Channel: "dm1"}); got.Key != want {
		t.Errorf("key = %+v, want %+v", got.Key, want)
	}
	if got.Text != "what is the status?" {
		t.Errorf("text = %q", got.Text)
	}
	if len(f.Threads()) != 0 {
		t.Errorf("a DM started a thread: %+v", f.Threads())
	}
}

func TestIgnoresBotsAndOwnMessages(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)

	// Another bot mentions us in a channel and writes in a DM.
	f.Send(discordfake.UserMessage{ChannelID: "100", GuildID: guild, UserID: "b2", Content: "hello bot", MentionsBot: true, AuthorIsBot: true})
	f.Send(discordfake.UserMessage{ChannelID: "dm-bot", UserID: "b2", Content: "hello", AuthorIsBot: true})
	// Our own post (Discord echoes it as MESSAGE_CREATE), even one that
	// mentions us.
	dm := bridges.ConversationKey{Bot: botName, Channel: "dm1"}
	f.SendMessage("dm1", "", "u1", "hi", false)
	if _, err := r.Post(t.Context(), dm, bridges.Message{Text: "I am <@" + f.BotID() + "> and I answer"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	sentinel := f.SendMessage("dm1", "", "u1", "sentinel", false)
	r.rec.waitMsg(t, sentinel)

	var texts []string
	for _, m := range r.rec.messages() {
		texts = append(texts, m.Text)
	}
	if want := []string{"hi", "sentinel"}; !slices.Equal(texts, want) {
		t.Errorf("delivered %q, want %q", texts, want)
	}
	if len(f.Threads()) != 0 {
		t.Errorf("a bot's mention started a thread")
	}
}

func TestHandlerFailureIsRetried(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.mu.Lock()
	r.rec.failNext = 2
	r.rec.mu.Unlock()

	id := f.SendMessage("dm1", "", "u1", "hello", false)
	r.rec.waitMsg(t, id)
	if n := countIDs(r.rec.messages())[id]; n != 1 {
		t.Errorf("delivered %d times, want 1", n)
	}
}

// Discord never sends a message again: one the core cannot record for
// want of disk space is held and retried (longer than the few attempts a
// busy database gets) until it is recorded, and the messages behind it
// follow in order.
func TestDiskFullMessageHeld(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.mu.Lock()
	r.rec.failFull = 8 // twice the attempts any other failure gets
	r.rec.mu.Unlock()

	first := f.SendMessage("dm1", "", "u1", "written while the disk is full", false)
	second := f.SendMessage("dm1", "", "u1", "and another", false)
	r.rec.waitMsg(t, second)
	var ids []string
	for _, m := range r.rec.messages() {
		ids = append(ids, m.MsgID)
	}
	if !slices.Equal(ids, []string{first, second}) {
		t.Errorf("core got %v, want %v once each, in order", ids, []string{first, second})
	}
}

func TestAttachments(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)

	png := make([]byte, 1500)
	copy(png, "\x89PNG\r\n\x1a\n")
	id := f.Send(discordfake.UserMessage{
		ChannelID: "dm1", UserID: "u1", Content: "what is in this screenshot?",
		Attachments: []discordfake.Attachment{{Filename: "shot.png", ContentType: "image/png", Data: png}},
	})
	got := r.rec.waitMsg(t, id)
	if len(got.Files) != 1 {
		t.Fatalf("files = %+v", got.Files)
	}
	file := got.Files[0]
	if file.Name != "shot.png" || file.MimeType != "image/png" || file.Size != 1500 || file.URL == "" || file.ID == "" {
		t.Errorf("file = %+v", file)
	}

	data, err := r.FetchFile(t.Context(), file, 2000)
	if err != nil || !slices.Equal(data, png) {
		t.Fatalf("FetchFile = %d bytes, %v", len(data), err)
	}
	tests := []struct {
		name string
		file bridges.File
	}{
		{"size known", file},
		{"size unknown", bridges.File{Name: file.Name, URL: file.URL}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.FetchFile(t.Context(), tc.file, 1000); !isTooLarge(err) {
				t.Errorf("FetchFile over the cap: err = %v, want ErrTooLarge", err)
			}
		})
	}
}

func TestThreadName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 40)
	tests := []struct{ text, want string }{
		{"fix the **flaky** test in `ci.yml`", "fix the flaky test in ci.yml"},
		{"multi\nline\n\nmessage", "multi line message"},
		{"<@123> ping <#456> here", "ping here"},
		{"", "Conversation with Ada"},
		{"   ", "Conversation with Ada"},
		{long, strings.TrimSpace(strings.Repeat("word ", 19)) + " word…"},
		{strings.Repeat("x", 150), strings.Repeat("x", 99) + "…"},
	}
	for _, tc := range tests {
		got := threadName(tc.text, "Ada")
		if got != tc.want {
			t.Errorf("threadName(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n < 1 || n > maxThreadName {
			t.Errorf("threadName(%q) has %d characters", tc.text, n)
		}
	}
}

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
	cfg := bridgetest.Config(t, bot)
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{botName: b}, nil)
	waitReady(t, b, f)

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

// A reply quoting a colleague's message reaches the core with the quoted
// author and text and the quoted attachment as a file of its own (fetched
// like the message's own, under the same cap); a stranger's reply carries
// none of it; a reply to a message that no longer exists names its id only.
func TestReplyQuotesReferencedMessage(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.mu.Lock()
	r.rec.refuse[stranger] = true
	r.rec.mu.Unlock()

	png := make([]byte, 1500)
	copy(png, "\x89PNG\r\n\x1a\n")
	orig := f.Send(discordfake.UserMessage{ChannelID: "100", GuildID: guild, UserID: "u2", UserName: "grace",
		Content: "the deploy graph from last night", Attachments: []discordfake.Attachment{{Filename: "graph.png", ContentType: "image/png", Data: png}}})
	reply := f.Send(discordfake.UserMessage{ChannelID: "100", GuildID: guild, UserID: "u1", MentionsBot: true,
		Content: "summarise this", ReplyTo: orig})
	got := r.rec.waitMsg(t, reply)
	if got.Text != "summarise this" || got.ReplyTo != orig {
		t.Errorf("text %q, reply to %q; want %q quoting %s", got.Text, got.ReplyTo, "summarise this", orig)
	}
	wantQuoted := "grace wrote:\n[graph.png, attached as quoted-graph.png]\nthe deploy graph from last night"
	if got.Quoted != wantQuoted {
		t.Errorf("quoted = %q, want %q", got.Quoted, wantQuoted)
	}
	if len(got.Files) != 1 || got.Files[0].Name != "quoted-graph.png" || got.Files[0].MimeType != "image/png" || got.Files[0].Size != 1500 {
		t.Fatalf("files = %+v, want the quoted image", got.Files)
	}
	if data, err := r.FetchFile(t.Context(), got.Files[0], 2000); err != nil || !slices.Equal(data, png) {
		t.Errorf("FetchFile(quoted) = %d bytes, %v", len(data), err)
	}
	if _, err := r.FetchFile(t.Context(), got.Files[0], 1000); !isTooLarge(err) {
		t.Errorf("FetchFile(quoted) over the cap: err = %v, want ErrTooLarge", err)
	}

	thread := got.Key.Thread
	bare := f.Send(discordfake.UserMessage{ChannelID: thread, GuildID: guild, UserID: stranger, Content: "and this?", ReplyTo: reply})
	if m := r.rec.waitMsg(t, bare); m.Quoted != "" || m.ReplyTo != "" || len(m.Files) != 0 || m.Text != "" {
		t.Errorf("a stranger's reply carries %+v", m)
	}
	gone := f.Send(discordfake.UserMessage{ChannelID: thread, GuildID: guild, UserID: "u1", Content: "and that?", ReplyTo: "999"})
	if m := r.rec.waitMsg(t, gone); m.Quoted != "" || m.ReplyTo != "999" || len(m.Files) != 0 || m.Text != "and that?" {
		t.Errorf("reply to a deleted message: %+v", m)
	}
}

// With the real core: the agent gets a reply's referenced message marked
// as quoted, before the author's own words, and its image.
func TestReplyQuotedToAgentWithCore(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	bot := testBot(f)
	bot.Access = config.Access{Users: []string{"u1"}}
	cfg := bridgetest.Config(t, bot)
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{botName: b}, nil)
	waitReady(t, b, f)

	orig := f.Send(discordfake.UserMessage{ChannelID: "100", GuildID: guild, UserID: "u2", UserName: "grace",
		Content:     "the build is red since Monday\nsee CI",
		Attachments: []discordfake.Attachment{{Filename: "ci.png", ContentType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nci")}}})
	reply := f.Send(discordfake.UserMessage{ChannelID: "100", GuildID: guild, UserID: "u1", MentionsBot: true,
		Content: "summarise this", ReplyTo: orig})
	if _, err := f.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == reply && strings.Contains(m.Content, "pong: ")
	}, wait); err != nil {
		t.Fatalf("reply not answered: %v", err)
	}
	want := "[Replying to this message]\n> grace wrote:\n> [ci.png, attached as quoted-ci.png]\n> the build is red since Monday\n> see CI\n\nsummarise this"
	var texts []string
	images := 0
	for _, s := range core.Pool.Sessions() {
		for _, m := range s.Sent() {
			texts = append(texts, m.Text)
			images += len(m.Images)
		}
	}
	if len(texts) != 1 || !strings.HasPrefix(texts[0], want) || images != 1 {
		t.Errorf("agent got %q and %d images, want text starting %q and the quoted image", texts, images, want)
	}
}
