package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Snapshot lets the core list the processes of the counting pool.
func (c *countingPool) Snapshot() []pool.LiveInfo {
	return c.Pool.(interface{ Snapshot() []pool.LiveInfo }).Snapshot()
}

// TestOperatorDecidesApproval: a bridge admin decides a pending card from
// the operator view; the bot's approver list does not apply, the card says
// who decided and the audit log records web:NAME. A decided request is no
// longer open.
func TestOperatorDecidesApproval(t *testing.T) {
	tests := []struct {
		choice, wantText, wantAudit string
	}{
		{bridges.ChoiceAllow, "allowed ", "allow"},
		{bridges.ChoiceDeny, "denied: Denied by @ana (web console)", "deny"},
	}
	for _, tt := range tests {
		t.Run(tt.choice, func(t *testing.T) {
			h := start(t, setup{script: toolScript, access: teamAccess})
			k := key("T1")
			h.send(k, "m1", "alice", "bash: git push origin main")
			card := h.waitCard(k, "git push origin main")

			if err := h.core.DecideApproval(ctxT(t), card.CardID, "always", "ana"); err == nil {
				t.Error("DecideApproval accepted the choice \"always\"")
			}
			if err := h.core.DecideApproval(ctxT(t), card.CardID, tt.choice, "ana"); err != nil {
				t.Fatalf("DecideApproval: %v", err)
			}
			h.waitText(k, tt.wantText)
			if ds := h.session(1).Decisions(); len(ds) != 1 || ds[0].Allow != (tt.choice == bridges.ChoiceAllow) {
				t.Fatalf("decisions = %+v", ds)
			}
			ap, err := h.st.GetApproval(ctxT(t), card.CardID)
			if err != nil || string(ap.Decision) != tt.wantAudit || ap.DecidedBy != bridges.OperatorPrefix+"ana" {
				t.Errorf("audit = %+v, %v; want %s by web:ana", ap, err, tt.wantAudit)
			}
			if err := h.core.DecideApproval(ctxT(t), card.CardID, tt.choice, "ana"); !errors.Is(err, bridges.ErrNotOpen) {
				t.Errorf("second decision: err %v, want ErrNotOpen", err)
			}
			if err := h.core.DecideApproval(ctxT(t), "no-such-id", tt.choice, "ana"); !errors.Is(err, bridges.ErrNotOpen) {
				t.Errorf("unknown request: err %v, want ErrNotOpen", err)
			}
		})
	}
}

// TestOperatorLiveAgents (real CLI): the live agent is listed with its
// conversation, pid, session and memory; stopping it ends the process and
// the next message resumes the session with its history.
func TestOperatorLiveAgents(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	k := key("ops")
	l.send(k, "m1", "alice", "remember the word heron")
	l.waitReply(k, "heron")
	l.waitFinal(k)

	agents, err := l.core.LiveAgents(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	conv := l.conversation(k)
	if len(agents) != 1 {
		t.Fatalf("live agents %+v, want one", agents)
	}
	a := agents[0]
	if a.Key != k || a.ConversationID != conv.ID || a.SessionID != conv.SessionID || a.PID <= 0 || a.Profile != "coder" {
		t.Errorf("live agent %+v does not match conversation %+v", a, conv)
	}
	if a.RSSBytes < 10<<20 {
		t.Errorf("agent memory %d bytes; a live CLI uses far more", a.RSSBytes)
	}

	if err := l.core.StopAgent(ctxT(t), a.ConversationID, "ana"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "no live agent", waitTimeout, func() bool {
		agents, err := l.core.LiveAgents(ctxT(t))
		return err == nil && len(agents) == 0
	})
	l.send(k, "m2", "alice", "which word?")
	l.waitReply(k, "which word?")
	texts := l.userTexts()
	if last := strings.Join(texts[len(texts)-1], "\n"); !strings.Contains(last, "heron") {
		t.Errorf("resumed session lost its history; last request: %q", last)
	}
}
