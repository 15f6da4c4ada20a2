package core_test

// Acceptance tests of spend limits and sessions with the real CLI against
// the fake model (see acceptance_test.go).

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// TestAcceptanceDailyLimit: a user over the daily limit is refused with the
// limit and its reset time, and nothing of the refused message reaches the
// agent (the model never sees it); another user still gets answers.
func TestAcceptanceDailyLimit(t *testing.T) {
	l := startLive(t, liveSetup{configure: func(c *config.Config) {
		c.Limits = []config.Limit{{Bot: "bot", TZ: "UTC", Location: time.UTC,
			PerUser: config.Budget{USDPerDay: 0.000001}}} // the first turn uses it up
	}})
	k := key("L1")
	l.send(k, "m1", "alice", "first question")
	l.waitReply(k, "pong: first question")
	l.waitFinal(k)
	sp, err := l.st.Spend(ctxT(t), store.SpendQuery{Bot: "bot", UserID: "alice"})
	if err != nil || sp.Turns != 1 || sp.CostUSD <= 0 {
		t.Fatalf("alice's spend after one turn = %+v, %v; want one turn with a cost", sp, err)
	}

	requests := len(l.srv.MessagesRequests())
	l.send(k, "m2", "alice", "second question over budget")
	refusal := l.waitLive(k, "⛔")
	t.Logf("refusal: %s", refusal.Text)
	for _, want := range []string{"@alice, your message was not sent to the agent", "your daily budget is used up", "You can send messages again at 00:00 UTC (in "} {
		if !strings.Contains(refusal.Text, want) {
			t.Errorf("refusal lacks %q:\n%s", want, refusal.Text)
		}
	}
	l.waitFinal(k)
	if st := msgState(t, l.st, l.conversation(k).ID, "m2"); st != store.InboxCancelled {
		t.Errorf("refused message state = %s, want cancelled", st)
	}

	l.send(k, "m3", "bob", "bob asks")
	l.waitReply(k, "pong: bob asks")
	l.waitFinal(k)
	for _, texts := range l.userTexts() {
		for _, tx := range texts {
			if strings.Contains(tx, "over budget") {
				t.Fatalf("the refused message reached the model: %q", tx)
			}
		}
	}
	if got := len(l.srv.MessagesRequests()); got <= requests {
		t.Errorf("bob's message made no model request (%d before, %d after)", requests, got)
	}
}

// TestAcceptanceResumeWithHistory: !resume in a new thread continues an
// older session with its history (the model sees the old thread's
// prompts), and the old thread goes on with a fresh session.
func TestAcceptanceResumeWithHistory(t *testing.T) {
	l := startLive(t, liveSetup{})
	old, fresh := key("R1"), key("R2")
	l.send(old, "m1", "alice", "remember the word banana")
	l.waitReply(old, "pong: remember the word banana")
	l.waitFinal(old)
	sid := l.conversation(old).SessionID

	l.send(fresh, "c1", "alice", "!sessions")
	l.waitLive(fresh, "`"+sid[:8]+"`")
	l.send(fresh, "c2", "alice", "!resume "+sid[:8])
	l.waitLive(fresh, "↩️ Resumed session `"+sid[:8]+"`: “remember the word banana”")
	resumes := l.counted.resumes.Load()
	l.send(fresh, "m2", "alice", "[echo-history]")
	l.waitReply(fresh, "history: remember the word banana")
	if got := l.counted.resumes.Load(); got != resumes+1 {
		t.Errorf("resumed spawns: %d → %d, want one more", resumes, got)
	}
	if got := l.conversation(fresh).SessionID; got != sid {
		t.Errorf("the new thread's session = %s, want %s", got, sid)
	}

	l.send(old, "m3", "alice", "[echo-history]")
	l.waitReply(old, "history: (none)")
	l.waitFinal(old)
	l.waitFinal(fresh)
}
