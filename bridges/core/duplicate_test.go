package core_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestRedeliveryAnsweredOnce: a platform message delivered six times (five
// at once, one after the answer) reaches the agent once, is answered once,
// and is counted as accepted once and duplicate five times.
func TestRedeliveryAnsweredOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := start(t, setup{metrics: metrics.New(reg)})
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
	h.waitLedgerFinal(k)

	if sent := h.session(1).Sent(); len(sent) != 2 || sent[0].Text != "once please" || sent[1].Text != "next" {
		t.Errorf("the agent got %+v, want the redelivered message once, then the next", sent)
	}
	replies := 0
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "pong: once please") {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d replies to the redelivered message, want 1:\n%s", replies, h.plat.Dump())
	}
	const name = "agentbridge_messages_total"
	if got := testkit.CounterValue(t, reg, name, map[string]string{"bot": "bot", "outcome": "accepted"}); got != 2 {
		t.Errorf("accepted = %v, want 2 (the message and the next)", got)
	}
	if got := testkit.CounterValue(t, reg, name, map[string]string{"bot": "bot", "outcome": "duplicate"}); got != 5 {
		t.Errorf("duplicate = %v, want 5", got)
	}
}
