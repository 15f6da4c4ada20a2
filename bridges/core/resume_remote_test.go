package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/core"
)

// remoteOwnership runs every conversation here except those marked held
// by another replica, and records the !resume requests it forwards
// without delivering them (a lost signal).
type remoteOwnership struct {
	fakeOwnership
	mu        sync.Mutex
	elsewhere map[string]bool
	requests  []core.SessionRelease
}

func (f *remoteOwnership) Claim(_ context.Context, id string) (bool, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.elsewhere[id], false, nil
}

func (f *remoteOwnership) ForwardRelease(_ context.Context, r core.SessionRelease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	return nil
}

func (f *remoteOwnership) AnswerRelease(context.Context, core.SessionReleased) error { return nil }

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

var _ core.SessionForwarder = (*remoteOwnership)(nil)
