package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
)

// TestLimitPerUserTurnsInFlight: a per_user turns_per_hour limit counts
// the turns a person's messages started that have not finished (whose
// usage is not recorded yet): with a limit of one turn, a quick second
// message — in the same thread or in another — is refused while the first
// turn still runs, instead of slipping past the count of recorded turns.
func TestLimitPerUserTurnsInFlight(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if strings.Contains(m.Text, "slow") {
			select {
			case <-release:
			case <-time.After(waitTimeout):
			}
		}
		bridgetest.Pong(s, m)
	}
	h := start(t, setup{script: script, configure: withLimit(config.Limit{PerUser: config.Budget{TurnsPerHour: 1}})})
	defer close(release) // before the harness stops
	k1, k2 := key("T1"), key("T2")
	h.send(k1, "m1", "alice", "slow one")
	ctx := t.Context()
	if _, err := h.session(1).WaitSent(ctx, 1); err != nil {
		t.Fatal(err)
	}

	h.send(k2, "m2", "alice", "quick two")
	got := h.plat.WaitFor(t, k2, waitTimeout, "a refusal or an answer", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "⛔") || strings.Contains(m.Text, "pong: quick two")
	})
	if !strings.Contains(got.Text, "⛔") {
		t.Fatalf("another thread's message got past the limit while the first turn ran: %q", got.Text)
	}
	h.send(k1, "m3", "alice", "quick three")
	got = h.plat.WaitFor(t, k1, waitTimeout, "a refusal or an answer", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "⛔") || strings.Contains(m.Text, "pong: quick three")
	})
	if !strings.Contains(got.Text, "⛔") || !strings.Contains(got.Text, "1 of 1 turns") {
		t.Fatalf("a follow-up got past the limit while the first turn ran: %q", got.Text)
	}
	h.send(k2, "m4", "bob", "bob's turn")
	h.waitText(k2, "pong: bob's turn") // the limit is per user

	release <- struct{}{}
	h.waitText(k1, "pong: slow one")
	h.waitLedgerFinal(k1)
	if n := len(h.session(1).Sent()); n != 1 {
		t.Errorf("alice's agent got %d messages, want 1", n)
	}
}
