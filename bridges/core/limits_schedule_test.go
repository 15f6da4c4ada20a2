package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
)

// TestLimitHoldsScheduledRuns: a scheduled run is held to the bot's spend
// limit like a person's message, and an admin's exemption does not follow
// the schedules the admin made: with the bot's one turn per hour used, the
// admin's schedule fires, is refused, and the agent never gets its prompt.
func TestLimitHoldsScheduledRuns(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	h := start(t, setup{clock: clock, access: config.Access{Admins: []string{"root"}},
		configure: withLimit(config.Limit{Total: config.Budget{TurnsPerHour: 1}, ExemptAdmins: true})})
	k := key("T1")
	h.send(k, "m1", "root", `!schedule add "0 9 * * *" tz=UTC scheduled prompt`)
	h.waitText(k, "🗓 Scheduled #1")
	h.send(k, "m2", "alice", "one")
	h.waitText(k, "pong: one")
	h.waitLedgerFinal(k)

	waitSchedulerArmed(t, clock)
	clock.Advance(time.Hour) // 09:00
	h.waitText(k, "⏰ scheduled: scheduled prompt")
	h.waitText(k, "⛔")
	h.waitLedgerFinal(k)
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "pong: scheduled prompt") {
			t.Errorf("the scheduled run was answered past the limit: %q", m.Text)
		}
	}
	if sent := h.session(1).Sent(); len(sent) != 1 || sent[0].Text != "one" {
		t.Errorf("the agent got %+v, want alice's message alone", sent)
	}
}
