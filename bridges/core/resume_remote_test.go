package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// remoteOwnership runs every conversation here except those marked held
// by another replica, and records the !resume requests it forwards
// without delivering them (a lost signal).
type remoteOwnership struct {
	fakeOwnership
	mu        sync.Mutex
	elsewhere map[string]bool
	requests  []ownership.SessionRelease
	answers   []ownership.SessionReleased
}

func (f *remoteOwnership) Claim(_ context.Context, id string) (ownership.Tenure, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return ownership.Tenure{OK: !f.elsewhere[id]}, nil
}

func (f *remoteOwnership) Holding(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.elsewhere[id]
}

func (f *remoteOwnership) ForwardRelease(_ context.Context, r ownership.SessionRelease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	return nil
}

func (f *remoteOwnership) AnswerRelease(_ context.Context, a ownership.SessionReleased) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, a)
	return nil
}

// waitAnswers waits until n answers were sent and returns them.
func (f *remoteOwnership) waitAnswers(t *testing.T, n int) []ownership.SessionReleased {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		f.mu.Lock()
		got := append([]ownership.SessionReleased(nil), f.answers...)
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d answers sent, want %d", len(got), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *remoteOwnership) markElsewhere(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.elsewhere[id] = true
}

// TestResumeRemoteNoAnswer: !resume of a session whose thread another
// replica runs asks that replica; when no answer comes (the signal was
// lost) the thread stops waiting after 20 s, says so, keeps its session,
// and answers its next message.
func TestResumeRemoteNoAnswer(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	own := &remoteOwnership{elsewhere: map[string]bool{}}
	h := start(t, setup{ownership: own, clock: clock})
	old, fresh := key("T1"), key("T2")
	h.send(old, "m1", "alice", "refactor the parser")
	h.waitText(old, "pong: refactor the parser")
	h.waitLedgerFinal(old)
	oldConv := h.conversation(old)
	own.markElsewhere(oldConv.ID) // from now on another replica runs it

	h.send(fresh, "c1", "alice", "!resume "+short(oldConv.SessionID))
	h.send(fresh, "c2", "alice", "!status") // answered once the !resume was handled
	h.waitText(fresh, "📊 Session")
	own.mu.Lock()
	reqs := own.requests
	own.mu.Unlock()
	if len(reqs) != 1 || reqs[0].From != oldConv.ID || reqs[0].To != h.conversation(fresh).ID ||
		reqs[0].SessionID != oldConv.SessionID || reqs[0].ByID != "alice" {
		t.Fatalf("forwarded requests = %+v, want one for session %s from %s", reqs, oldConv.SessionID, oldConv.ID)
	}
	h.send(fresh, "m2", "alice", "held while waiting")
	clock.Advance(19 * time.Second)
	clock.Advance(2 * time.Second)
	h.waitText(fresh, "did not answer")
	if got := h.conversation(fresh).SessionID; got == oldConv.SessionID {
		t.Errorf("the thread took session %s without an answer", got)
	}
	if got := h.conversation(old).SessionID; got != oldConv.SessionID {
		t.Errorf("the old thread's session changed to %s", got)
	}
	h.waitText(fresh, "pong: held while waiting") // the message waiting meanwhile is delivered
	for _, m := range h.plat.Messages(fresh) {
		if strings.Contains(m.Text, "Resumed session") {
			t.Errorf("the thread says it resumed: %q", m.Text)
		}
	}
}

// TestResumeRemoteAnswered: the answer of the replica running the
// session's thread — it moved the session in the store — makes the
// resuming thread adopt it: it says so, and its next spawn resumes the
// session.
func TestResumeRemoteAnswered(t *testing.T) {
	own := &remoteOwnership{elsewhere: map[string]bool{}}
	h := start(t, setup{ownership: own})
	old, fresh := key("T1"), key("T2")
	h.send(old, "m1", "alice", "refactor the parser")
	h.waitText(old, "pong: refactor the parser")
	h.waitLedgerFinal(old)
	oldConv := h.conversation(old)
	own.markElsewhere(oldConv.ID)

	h.send(fresh, "c1", "alice", "!resume "+short(oldConv.SessionID))
	h.send(fresh, "m2", "alice", "carry on") // waits for the answer
	h.send(fresh, "c2", "alice", "!status")
	h.waitText(fresh, "📊 Session")
	// The other replica gives the session up and answers.
	freshConv := h.conversation(fresh)
	if err := h.st.MoveSession(ctxT(t), oldConv.ID, freshConv.ID, oldConv.SessionID, "f0000000-0000-4000-8000-000000000000"); err != nil {
		t.Fatal(err)
	}
	h.core.HandleReleased(ctxT(t), ownership.SessionReleased{To: freshConv.ID, SessionID: oldConv.SessionID, Summary: "refactor the parser"})
	h.waitText(fresh, "↩️ Resumed session")
	h.waitText(fresh, "pong: carry on")
	s, err := h.pool.WaitSessionFor(ctxT(t), freshConv.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Opts.SessionID != oldConv.SessionID || !s.Opts.Resume {
		t.Errorf("the thread spawned session %q resume=%v, want %q resumed", s.Opts.SessionID, s.Opts.Resume, oldConv.SessionID)
	}
}

// TestHandleRelease: the replica running a session's thread gives the
// session up to a !resume from another replica and answers with its
// summary; a request that comes too late is refused and moves nothing.
func TestHandleRelease(t *testing.T) {
	own := &remoteOwnership{elsewhere: map[string]bool{}}
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := start(t, setup{ownership: own, clock: clock})
	old, other := key("T1"), key("T2")
	h.send(old, "m1", "alice", "refactor the parser")
	h.waitText(old, "pong: refactor the parser")
	h.waitLedgerFinal(old)
	h.send(other, "c1", "bob", "!status") // the asking thread, here only a row
	h.waitText(other, "📊 Session")
	oldConv, otherConv := h.conversation(old), h.conversation(other)

	late := ownership.SessionRelease{From: oldConv.ID, To: otherConv.ID, SessionID: oldConv.SessionID, ByID: "bob", ByName: "bob",
		Until: clock.Now().Add(-time.Second)}
	h.core.HandleRelease(ctxT(t), late)
	if a := own.waitAnswers(t, 1)[0]; a.Failure == "" || a.To != otherConv.ID {
		t.Errorf("answer to a late request = %+v, want a failure for %s", a, otherConv.ID)
	}
	if got := h.conversation(old).SessionID; got != oldConv.SessionID {
		t.Fatalf("a late request moved the session (now %s)", got)
	}

	req := late
	req.Until = clock.Now().Add(10 * time.Second)
	h.core.HandleRelease(ctxT(t), req)
	a := own.waitAnswers(t, 2)[1]
	if a.Failure != "" || a.SessionID != oldConv.SessionID || a.Summary != "refactor the parser" || a.To != otherConv.ID {
		t.Fatalf("answer = %+v, want the session moved with its summary", a)
	}
	if got := h.conversation(other).SessionID; got != oldConv.SessionID {
		t.Errorf("the asking thread's session is %s, want %s", got, oldConv.SessionID)
	}
	h.waitText(old, "↪️ @bob continued this thread's session")
}

var _ ownership.SessionForwarder = (*remoteOwnership)(nil)
