package core_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

const redeliveryPrefix = "[agentbridge: your previous turn was interrupted"

func TestAgentCrashRecovery(t *testing.T) {
	h := start(t, setup{script: toolScript})
	k := key("T1")
	h.send(k, "m1", "alice", "bash: make deploy")
	card := h.waitCard(k, "make deploy")
	first := h.session(1)

	first.Kill()
	h.waitText(k, "stopped unexpectedly")
	h.plat.WaitFor(t, k, waitTimeout, "the expired card", func(m bridgetest.Msg) bool {
		return m.CardID == card.CardID && strings.Contains(m.Text, "Expired: agent restarted") && len(m.Buttons) == 0
	})
	second := h.session(2)
	sent, err := second.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent[0].Text, redeliveryPrefix) || !strings.HasSuffix(sent[0].Text, "bash: make deploy") {
		t.Fatalf("re-delivered message = %q", sent[0].Text)
	}
	acq := h.pool.Acquisitions()
	if len(acq) != 2 || !acq[1].Opts.Resume || acq[1].Opts.SessionID != acq[0].Opts.SessionID {
		t.Fatalf("second spawn must resume the same session: %+v", acq)
	}

	// The resumed agent asks again; this time it is allowed.
	card2 := h.plat.WaitFor(t, k, waitTimeout, "a new card", func(m bridgetest.Msg) bool {
		return m.CardID != "" && m.CardID != card.CardID && len(m.Buttons) > 0
	})
	if _, err := h.plat.Click(ctxT(t), k, card2.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "allowed ")
	h.waitLedgerFinal(k)
	if n := len(second.Sent()); n != 1 {
		t.Errorf("message delivered %d times to the resumed session", n)
	}
	if sent[0].UUID == first.Sent()[0].UUID {
		t.Error("the re-delivery reused the message uuid: a resumed CLI ignores it")
	}
	in, err := h.st.InboxByID(ctxT(t), ledgerID(t, h.st, h.conversation(k).ID, "m1"))
	if err != nil || in.State != store.InboxCompleted || in.Attempts != 1 {
		t.Errorf("ledger = %+v, %v", in, err)
	}
	as, _ := h.st.ApprovalsForConversation(ctxT(t), h.conversation(k).ID)
	if len(as) != 2 || as[0].Decision != store.DecisionExpired || as[1].Decision != store.DecisionAllow {
		t.Errorf("audit = %+v", as)
	}
}

func TestCrashTwiceGivesUp(t *testing.T) {
	h := start(t, setup{script: toolScript})
	k := key("T1")
	h.send(k, "m1", "alice", "hang")
	first := h.session(1)
	if _, err := first.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	first.Kill()
	second := h.session(2)
	if _, err := second.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	second.Kill()
	h.waitText(k, "I gave up on a message from @alice")
	h.waitLedgerFinal(k)
	ms, _ := h.st.UndeliveredInbox(ctxT(t), h.conversation(k).ID)
	if len(ms) != 0 {
		t.Fatalf("undelivered: %+v", ms)
	}
	h.send(k, "m2", "alice", "still there?")
	h.waitText(k, "pong: still there?")
	if n := len(h.pool.Sessions()); n != 3 {
		t.Errorf("%d sessions, want 3 (the failed message must not be retried forever)", n)
	}
}

func TestRestartRedeliversAndPostsPendingReplies(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bridge.db")
	plat := bridgetest.New(defaultLimits())

	// First run: a turn that never ends, an open card, and a reply that was
	// stored but not posted when the bridge went down.
	h1 := start(t, setup{script: toolScript, dbPath: db, platform: plat})
	k1, k2 := key("T1"), key("T2")
	h1.send(k1, "m1", "alice", "hang")
	if _, err := h1.session(1).WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	h1.send(k2, "m2", "bob", "bash: rm -rf build")
	card := h1.waitCard(k2, "rm -rf build")
	testkit.WaitUntil(t, "the card reference stored", waitTimeout, func() bool {
		as, err := h1.st.ApprovalsForConversation(ctxT(t), h1.conversation(k2).ID)
		return err == nil && len(as) == 1 && as[0].CardRef != ""
	})
	conv1 := h1.conversation(k1)
	if _, err := h1.st.AddOutbox(ctxT(t), store.OutboxMessage{ConversationID: conv1.ID, Text: "reply from before the restart"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h1.st.Enqueue(ctxT(t), store.InboxMessage{ConversationID: conv1.ID, PlatformMsgID: "m3", UserID: "alice", UserName: "alice", Text: "queued behind"}); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	h1.pool.Close()
	if ms := plat.Messages(k1); len(ms) > 0 && strings.Contains(ms[len(ms)-1].Text, "before the restart") {
		t.Fatal("the pending reply was posted by the stopped core")
	}

	// Second run on the same database.
	h2 := start(t, setup{script: toolScript, dbPath: db, platform: plat})
	h2.waitText(k1, "reply from before the restart")
	plat.WaitFor(t, k2, waitTimeout, "the stale card closed", func(m bridgetest.Msg) bool {
		return m.CardID == card.CardID && strings.Contains(m.Text, "Expired: bridge restarted") && len(m.Buttons) == 0
	})
	s, err := h2.pool.WaitSessionFor(ctxT(t), conv1.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := s.WaitSent(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sent[0].Text, redeliveryPrefix) || !strings.HasSuffix(sent[0].Text, "hang") {
		t.Errorf("interrupted message not re-delivered first with the note: %q", sent[0].Text)
	}
	if sent[1].Text != "queued behind" {
		t.Errorf("pending message = %q, want it delivered as is, after the interrupted one", sent[1].Text)
	}
	h2.waitText(k1, "pong: queued behind")
	if !s.Opts.Resume || s.Opts.SessionID != conv1.SessionID {
		t.Errorf("restart must resume the stored session: %+v", s.Opts)
	}
	as, _ := h2.st.ApprovalsForConversation(ctxT(t), h2.conversation(k2).ID)
	if len(as) == 0 || as[0].ID != card.CardID || as[0].Decision != store.DecisionExpired || as[0].Message != "bridge restarted" {
		t.Errorf("stale approval not audited as expired: %+v", as)
	}
	// A click on the stale card is refused.
	clicked, _ := plat.Click(ctxT(t), k2, card.CardID, bridges.ChoiceAllow, "bob", "bob")
	if r := clicked.WaitReply(t, waitTimeout); !strings.Contains(r, "no longer open") {
		t.Errorf("click on stale card: %q", r)
	}
}

func TestHandleMessageIsDurableBeforeReturning(t *testing.T) {
	h := start(t, setup{script: toolScript})
	k := key("T1")
	h.send(k, "m1", "alice", "hang")
	// HandleMessage has returned: the ledger must have the message already.
	conv := h.conversation(k)
	msgs, err := h.st.UndeliveredInbox(context.Background(), conv.ID)
	if err != nil || len(msgs) != 1 || msgs[0].PlatformMsgID != "m1" {
		t.Fatalf("ledger after HandleMessage = %+v, %v", msgs, err)
	}
}

func TestFailedResumeStartsFreshWithoutGivingUp(t *testing.T) {
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if s.Opts.Resume {
			// What the CLI does for --resume of a session it never wrote.
			s.Emit(streamjson.Result{Subtype: "error_during_execution", IsError: true,
				Errors: []string{"No conversation found with session ID: " + s.Opts.SessionID}})
			go s.Kill()
			return
		}
		toolScript(s, m)
	}
	h := start(t, setup{script: script})
	k := key("T1")
	h.send(k, "m1", "alice", "hang")
	first := h.session(1)
	if _, err := first.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	first.Kill() // crash during the very first turn: nothing to resume
	h.waitText(k, "could not be resumed")
	third := h.session(3)
	if third.Opts.Resume || third.Opts.SessionID != first.Opts.SessionID {
		t.Fatalf("after a failed resume the session must start fresh with the same id: %+v", third.Opts)
	}
	sent, err := third.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(sent[0].Text, "hang") {
		t.Errorf("fresh session got %q", sent[0].Text)
	}
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "gave up") {
			t.Errorf("a failed resume counted as a crash: %q", m.Text)
		}
	}
}

func TestEvictedBeforeFirstWriteReacquires(t *testing.T) {
	pool := bridgetest.NewFakePool(nil)
	defer pool.Close()
	pool.FailSends(1) // the first session is evicted before the core writes to it
	h := start(t, setup{pool: pool})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	if n := len(pool.Sessions()); n != 2 {
		t.Errorf("%d sessions, want a second one after the eviction", n)
	}
}
