package core_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// sendQuoting delivers user's text quoting the platform message replyTo.
func (h *harness) sendQuoting(k bridges.ConversationKey, msgID, user, text, replyTo string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := h.plat.Send(ctx, bridges.Inbound{Key: k, MsgID: msgID, UserID: user, UserName: user, Text: text, ReplyTo: replyTo}); err != nil {
		h.t.Fatalf("send %s: %v", msgID, err)
	}
}

// Issue 24, finding 1: on a platform without buttons a number quoting a
// card decides that card only, found by its message id in the store after
// a restart; quoting a closed card decides nothing and says why (before
// the fix "1" quoting closed card A allowed open card B).
func TestQuotedChoiceDecidesOnlyTheQuotedCard(t *testing.T) {
	lim := defaultLimits()
	lim.CanButtons = false
	db := filepath.Join(t.TempDir(), "bridge.db")
	plat := bridgetest.New(lim)
	k := key("T1")

	h1 := start(t, setup{noEdit: true, script: toolScript, limits: lim, dbPath: db, platform: plat})
	h1.send(k, "in1", "alice", "bash: touch a.txt")
	cardA := h1.waitCard(k, "touch a.txt")
	h1.sendQuoting(k, "in2", "alice", "1", cardA.Ref.ID)
	h1.waitText(k, `allowed {"command":"touch a.txt"`)
	old, _ := plat.Handler(ctxT(t))
	h1.stop()
	h1.pool.Close()

	h2 := start(t, setup{noEdit: true, script: toolScript, limits: lim, dbPath: db, platform: plat})
	testkit.WaitUntil(t, "the restarted core runs the platform", waitTimeout, func() bool { h, _ := plat.Handler(ctxT(t)); return h != old })
	h2.send(k, "in3", "alice", "bash: rm -rf build")
	cardB := h2.waitCard(k, "rm -rf build")
	h2.sendQuoting(k, "in4", "alice", "1", cardA.Ref.ID)
	h2.waitText(k, "already closed — allowed by @alice")
	// A reply quoting a message that is no card decides no card either.
	h2.sendQuoting(k, "in5", "alice", "yes", "some-answer")
	h2.sendQuoting(k, "in6", "alice", "2", cardB.Ref.ID) // 2 = Deny on every card
	h2.waitText(k, "denied: Denied by @alice")
	s := h2.session(1)
	if ds := s.Decisions(); len(ds) != 1 || ds[0].Allow {
		t.Fatalf("decisions after the restart = %+v, want only the deny of card B", ds)
	}
	for _, m := range s.Sent() {
		if strings.HasSuffix(m.Text, "1") {
			t.Errorf("the quoted choice reached the agent: %q", m.Text)
		}
	}
}
