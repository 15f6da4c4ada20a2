package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

func TestMessageAnsweredThroughOutbox(t *testing.T) {
	h := start(t, setup{})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	reply := h.waitText(k, "pong: hello")
	if !strings.Contains(reply.Text, "_") || !strings.Contains(reply.Text, "$0.0010") {
		t.Errorf("reply lacks the cost footer: %q", reply.Text)
	}
	h.waitLedgerFinal(k)

	conv := h.conversation(k)
	if conv.SessionID == "" || conv.OwnerUserID != "alice" || conv.Agent != "coder" {
		t.Errorf("conversation = %+v", conv)
	}
	acq := h.pool.Acquisitions()
	if len(acq) != 1 || acq[0].Opts.SessionID != conv.SessionID || acq[0].Opts.Resume {
		t.Fatalf("acquisitions = %+v, want one new session with the stored id", acq)
	}
	if acq[0].Limit.Profile != "coder" || acq[0].Limit.MaxLive != 4 || acq[0].Opts.Workdir != "/srv/project" {
		t.Errorf("acquire limit/options from the profile: %+v", acq[0])
	}
	sent := h.session(1).Sent()
	msgs, err := h.st.UndeliveredInbox(ctxT(t), conv.ID)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("undelivered = %v, %v", msgs, err)
	}
	in, err := h.st.InboxByID(ctxT(t), sent[0].UUID)
	if err != nil {
		t.Fatalf("the agent message's uuid is not a ledger id: %v", err)
	}
	if in.State != store.InboxCompleted || in.PlatformMsgID != "m1" {
		t.Errorf("ledger entry = %+v", in)
	}
	tot, err := h.st.UsageTotals(ctxT(t), conv.ID)
	if err != nil || tot.Count != 1 || tot.CostUSD != 0.001 {
		t.Errorf("usage = %+v, %v", tot, err)
	}
	h.waitOutboxEmpty()
}

func TestBurstReachesAgentWhileTurnRuns(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if m.Text == "first" {
			s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
			s.Emit(streamjson.TextDelta{Text: "working…"})
			<-release
		}
		s.Reply(m, "answer to "+m.Text)
	}
	h := start(t, setup{script: script})
	defer once.Do(func() { close(release) })
	k := key("T1")
	h.send(k, "m1", "alice", "first")
	sess := h.session(1)
	if _, err := sess.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	h.send(k, "m2", "bob", "second")
	h.send(k, "m3", "alice", "third")
	// Both follow-ups reach the agent while the first turn still runs.
	sent, err := sess.WaitSent(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range sent {
		texts = append(texts, m.Text)
	}
	if strings.Join(texts, ",") != "first,second,third" {
		t.Fatalf("agent got %v, want first,second,third in order", texts)
	}
	once.Do(func() { close(release) })
	for _, w := range []string{"answer to first", "answer to second", "answer to third"} {
		h.waitText(k, w)
	}
	h.waitLedgerFinal(k)
}

func TestDuplicateDeliveryIsOneAgentMessage(t *testing.T) {
	h := start(t, setup{})
	k := key("T1")
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { h.send(k, "same-id", "alice", "once please") })
	}
	wg.Wait()
	h.waitText(k, "pong: once please")
	h.send(k, "same-id", "alice", "once please") // a late redelivery
	h.send(k, "m2", "alice", "next")
	h.waitText(k, "pong: next")
	sent := h.session(1).Sent()
	if len(sent) != 2 || sent[0].Text != "once please" || sent[1].Text != "next" {
		t.Fatalf("agent got %d messages %+v, want the duplicate once", len(sent), sent)
	}
}

func TestOrderPreservedWithinConversation(t *testing.T) {
	h := start(t, setup{})
	k := key("T1")
	const n = 30
	for i := range n {
		h.send(k, fmt.Sprintf("m%d", i), "alice", fmt.Sprintf("msg %d", i))
	}
	h.waitText(k, fmt.Sprintf("pong: msg %d", n-1))
	sent := h.session(1).Sent()
	if len(sent) != n {
		t.Fatalf("agent got %d messages, want %d", len(sent), n)
	}
	for i, m := range sent {
		if m.Text != fmt.Sprintf("msg %d", i) {
			t.Fatalf("message %d is %q: order not preserved", i, m.Text)
		}
	}
}

func TestConversationsAreIndependent(t *testing.T) {
	h := start(t, setup{})
	for i := range 5 {
		h.send(key(fmt.Sprint("T", i)), fmt.Sprint("m", i), "alice", fmt.Sprint("hello ", i))
	}
	for i := range 5 {
		h.waitText(key(fmt.Sprint("T", i)), fmt.Sprint("pong: hello ", i))
	}
	if n := len(h.pool.Sessions()); n != 5 {
		t.Fatalf("%d sessions for 5 conversations", n)
	}
	ids := map[string]bool{}
	for _, s := range h.pool.Sessions() {
		ids[s.Opts.SessionID] = true
	}
	if len(ids) != 5 {
		t.Fatalf("session ids not distinct: %v", ids)
	}
}

func TestAccessControl(t *testing.T) {
	h := start(t, setup{access: config.Access{Channels: []string{"C1"}, Users: []string{"alice"}, Approvers: []string{"carol"}, Admins: []string{"dave"}}})
	other := bridges.ConversationKey{Bot: "bot", Channel: "C9", Thread: "T1"}
	h.send(other, "x1", "alice", "wrong channel")
	h.send(key("T1"), "x2", "mallory", "let me in")
	for i, u := range []string{"alice", "carol", "dave"} {
		h.send(key("T1"), fmt.Sprint("ok", i), u, "hi from "+u)
		h.waitText(key("T1"), "pong: hi from "+u)
	}
	if ms := h.plat.Messages(other); len(ms) != 0 {
		t.Errorf("bot spoke in a channel it may not use: %+v", ms)
	}
	for _, m := range h.plat.Messages(key("T1")) {
		if !strings.Contains(m.Text, "pong: hi from") {
			t.Errorf("public message besides the replies: %q", m.Text)
		}
	}
	if ps := h.plat.Privates(); len(ps) != 1 || ps[0].User != "mallory" || ps[0].Key != key("T1") {
		t.Errorf("private notices = %+v, want one to mallory in T1 (none for the wrong channel)", ps)
	}
	if owns, err := h.core.Owns(ctxT(t), other); err != nil || owns {
		t.Errorf("Owns(disallowed channel) = %v, %v", owns, err)
	}
	if owns, err := h.core.Owns(ctxT(t), key("T1")); err != nil || !owns {
		t.Errorf("Owns(T1) = %v, %v", owns, err)
	}
	for _, s := range h.pool.Sessions() {
		for _, m := range s.Sent() {
			if strings.Contains(m.Text, "let me in") || strings.Contains(m.Text, "wrong channel") {
				t.Errorf("refused message reached the agent: %q", m.Text)
			}
		}
	}
}

func TestUnknownBotAndInvalidMessage(t *testing.T) {
	h := start(t, setup{})
	ctx := ctxT(t)
	hd, err := h.plat.Handler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   bridges.Inbound
		want error
	}{
		{"unknown bot", bridges.Inbound{Key: bridges.ConversationKey{Bot: "nope", Channel: "C"}, MsgID: "1"}, bridges.ErrUnknownBot},
		{"no message id", bridges.Inbound{Key: key("T")}, bridges.ErrInvalidMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := hd.HandleMessage(ctx, tt.in); !errorsIs(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestIdleWorkerRetires(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := start(t, setup{retireAfter: 30 * time.Millisecond, clock: clock})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	clock.Advance(time.Hour) // any retirement timer is due
	h.send(k, "m1b", "alice", "again")
	h.waitText(k, "pong: again") // the worker handled what the clock fired
	if n := h.core.ActiveConversations(); n != 1 {
		t.Fatalf("%d workers: a conversation with a live agent must keep its worker", n)
	}
	if err := h.pool.Remove(ctxT(t), h.conversation(k).ID); err != nil { // the pool stops the idle agent
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the worker to retire", waitTimeout, func() bool {
		clock.Advance(time.Second)
		return h.core.ActiveConversations() == 0
	})
	if owns, err := h.core.Owns(ctxT(t), k); err != nil || !owns {
		t.Fatalf("Owns after retirement = %v, %v", owns, err)
	}
	h.send(k, "m2", "alice", "are you back?")
	h.waitText(k, "pong: are you back?")
	if s := h.session(2); !s.Opts.Resume {
		t.Errorf("a retired conversation must resume its session: %+v", s.Opts)
	}
}

func TestAttachmentsAndTyping(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		<-release
		s.Reply(m, "seen")
	}
	h := start(t, setup{script: script})
	k := key("T1")
	png := []byte("\x89PNG fake image")
	pdf := []byte("%PDF-1.7 fake")
	h.plat.AddFile("F1", png)
	h.plat.AddFile("F2", pdf)
	ctx := ctxT(t)
	err := h.plat.Send(ctx, bridges.Inbound{Key: k, MsgID: "m1", UserID: "alice", UserName: "alice", Text: "look",
		Files: []bridges.File{{ID: "F1", Name: "shot.png", MimeType: "image/png"}, {ID: "F2", Name: "../notes.pdf", MimeType: "application/pdf", Size: int64(len(pdf))},
			{ID: "F3", Name: "huge.zip", MimeType: "application/zip", Size: 25 << 20}}}) // F3: the platform has no such file
	if err != nil {
		t.Fatal(err)
	}
	sent, err := h.session(1).WaitSent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent[0].Images) != 1 || string(sent[0].Images[0].Data) != string(png) || sent[0].Images[0].MediaType != "image/png" {
		t.Errorf("image not forwarded: %+v", sent[0].Images)
	}
	// A document is saved in the session's private uploads directory and
	// named to the agent by path; a file over the cap is not fetched (the
	// platform would have failed) and the conversation is told.
	uploads := filepath.Join(h.cfg.DataDir, sessiondir.Dir, h.conversation(k).SessionID, sessiondir.Uploads)
	saved, _ := filepath.Glob(filepath.Join(uploads, "*-notes.pdf"))
	if len(saved) != 1 || !strings.Contains(sent[0].Text, "[attached file saved for you at "+saved[0]+" (application/pdf, 13 B)]") {
		t.Fatalf("document not saved for the agent (%q); text = %q", saved, sent[0].Text)
	}
	if data, err := os.ReadFile(saved[0]); err != nil || string(data) != string(pdf) {
		t.Errorf("saved document = %q, %v", data, err)
	}
	if !strings.Contains(sent[0].Text, "look") || !strings.Contains(sent[0].Text, "[attachment not forwarded: huge.zip is larger than 20.0 MB]") {
		t.Errorf("text = %q", sent[0].Text)
	}
	h.waitText(k, "📎 `huge.zip` is too large (25.0 MB): files up to 20.0 MB reach the agent.")
	testkit.WaitUntil(t, "the typing indicator", waitTimeout, func() bool { return h.plat.Typing(k) })
	close(release)
	h.waitText(k, "seen")
	testkit.WaitUntil(t, "the typing indicator to clear", waitTimeout, func() bool { return !h.plat.Typing(k) })
}

func TestQueueFullKeepsMessagesInLedger(t *testing.T) {
	lim := defaultLimits()
	plat := bridgetest.New(lim)
	block := make(chan struct{})
	var blocked sync.Once
	entered := make(chan struct{})
	plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if strings.Contains(m.Text, "pong: first") {
			blocked.Do(func() { close(entered); <-block }) // the worker hangs in a slow platform call
		}
		return nil
	})
	h := start(t, setup{noEdit: true, platform: plat, limits: lim, queueCapacity: 1})
	k := key("T1")
	h.send(k, "m0", "alice", "first")
	<-entered
	for i := 1; i <= 5; i++ { // the queue holds one input: most of these do not fit
		h.send(k, fmt.Sprint("m", i), "alice", fmt.Sprint("queued ", i))
	}
	if !strings.Contains(h.logs.String(), "conversation queue full") {
		t.Error("a full queue was not reported")
	}
	close(block)
	h.waitText(k, "pong: queued 5")
	h.waitLedgerFinal(k)
	sent := h.session(1).Sent()
	if len(sent) != 6 {
		t.Fatalf("agent got %d messages, want 6", len(sent))
	}
	for i, m := range sent[1:] {
		if m.Text != fmt.Sprint("queued ", i+1) {
			t.Errorf("message %d = %q: order lost", i+1, m.Text)
		}
	}
}

// TestReplyPostedWhileStoppingIsRecorded: a reply that reached the
// platform as the bridge began to stop is recorded as posted, so the next
// run does not post it again.
func TestReplyPostedWhileStoppingIsRecorded(t *testing.T) {
	h := start(t, setup{})
	k := key("T1")
	h.plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if strings.Contains(m.Text, "pong: hello") {
			h.cancel() // the bridge stops while this reply goes out
		}
		return nil
	})
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.stop()
	pending, err := h.st.PendingOutbox(ctxT(t))
	if err != nil || len(pending) != 0 {
		t.Errorf("after a stop during the post, pending replies %+v (%v): the next run would post them again", pending, err)
	}
}
