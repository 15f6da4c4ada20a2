package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// limitNow is the fake time of the limit tests: 15:00 UTC on a Monday.
// (Usage rows get the store's real time, which is later: they all fall in
// the fake day, month and hour.)
var limitNow = time.Date(2025, 3, 10, 15, 0, 0, 0, time.UTC)

// withLimit gives the test bot lim.
func withLimit(lim config.Limit) func(*config.Config) {
	return func(c *config.Config) {
		lim.Bot = "bot"
		if lim.TZ == "" {
			lim.TZ, lim.Location = "UTC", time.UTC
		}
		c.Limits = []config.Limit{lim}
	}
}

// counters reads a counter vector of reg as "label=value,…" → value.
func counters(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(labels, ",")] += m.GetCounter().GetValue()
		}
	}
	return out
}

// TestLimitPerUserDaily: each Pong turn costs $0.001 against a per-user
// daily budget of $0.0025: the third message warns (80 %), the fourth is
// refused with the limit and the reset time and never reaches the agent;
// another user still gets through; !cost shows what is left.
func TestLimitPerUserDaily(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := start(t, setup{clock: bridgetest.NewFakeClock(limitNow), metrics: metrics.New(reg),
		configure: withLimit(config.Limit{PerUser: config.Budget{USDPerDay: 0.0025}})})
	k := key("T1")
	for i, msg := range []string{"one", "two", "three"} {
		h.send(k, "m"+msg, "alice", msg)
		h.waitText(k, "pong: "+msg)
		if i == 1 {
			h.waitLedgerFinal(k)
		}
	}
	warn := h.waitText(k, "⚠️")
	if want := "@alice, 80% of your daily budget is used ($0.002 of $0.0025 today); it resets at 00:00 UTC (in 9h00m)."; !strings.Contains(warn.Text, want) {
		t.Errorf("warning = %q, want %q", warn.Text, want)
	}
	h.waitLedgerFinal(k)

	sess := h.session(1)
	before := len(sess.Sent())
	h.send(k, "mfour", "alice", "four")
	refusal := h.waitText(k, "⛔")
	for _, want := range []string{"your message was not sent to the agent", "your daily budget is used up ($0.003 of $0.0025 today)",
		"You can send messages again at 00:00 UTC (in 9h00m)."} {
		if !strings.Contains(refusal.Text, want) {
			t.Errorf("refusal lacks %q:\n%s", want, refusal.Text)
		}
	}
	h.waitLedgerFinal(k)
	conv := h.conversation(k)
	if st := msgState(t, h.st, conv.ID, "mfour"); st != store.InboxCancelled {
		t.Errorf("refused message state = %s, want cancelled", st)
	}

	// Another user has their own budget.
	h.send(k, "mbob", "bob", "from bob")
	h.waitText(k, "pong: from bob")
	sent := sess.Sent()
	if len(sent) != before+1 || !strings.Contains(sent[len(sent)-1].Text, "from bob") {
		t.Fatalf("the agent got %d more messages (last %q), want only bob's", len(sent)-before, sent[len(sent)-1].Text)
	}
	for _, m := range sent {
		if strings.Contains(m.Text, "four") {
			t.Errorf("the refused message reached the agent: %q", m.Text)
		}
	}

	h.send(k, "c1", "alice", "!cost")
	cost := h.waitText(k, "📉 Budget left:")
	if !strings.Contains(cost.Text, "• Your daily budget: $0 of $0.0025 left, resets at 00:00 UTC (in 9h00m)") {
		t.Errorf("!cost = %q", cost.Text)
	}

	if got := counters(t, reg, "agentbridge_limit_refusals_total"); got["bot=bot,limit=usd_per_day,scope=per_user"] != 1 {
		t.Errorf("refusal metrics = %v", got)
	}
	if got := counters(t, reg, "agentbridge_limit_warnings_total"); got["bot=bot,limit=usd_per_day,scope=per_user"] != 1 {
		t.Errorf("warning metrics = %v", got)
	}
	// The usage rows name who paid.
	sp, err := h.st.Spend(context.Background(), store.SpendQuery{Bot: "bot", UserID: "alice"})
	if err != nil || sp.Turns != 3 {
		t.Errorf("alice's turns = %+v, %v; want 3", sp, err)
	}
}

// TestLimitTotalTurnsPerHour: the bot-wide hourly turn limit counts
// everyone's turns; the next message, whoever sends it, is refused until
// the oldest turn of the hour is an hour old.
func TestLimitTotalTurnsPerHour(t *testing.T) {
	h := start(t, setup{configure: withLimit(config.Limit{Total: config.Budget{TurnsPerHour: 2}})})
	k := key("T1")
	h.send(k, "m1", "alice", "one")
	h.waitText(k, "pong: one")
	h.waitLedgerFinal(k)
	h.send(k, "m2", "bob", "two")
	h.waitText(k, "pong: two")
	h.waitLedgerFinal(k)
	first, err := h.st.NthTurnTime(context.Background(), store.SpendQuery{Bot: "bot"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.send(k, "m3", "carol", "three")
	refusal := h.waitText(k, "⛔")
	// Real clock: past 23:00 UTC the reset is on the next day ("again on Nov 24 at 00:14 UTC").
	want := "@carol, your message was not sent to the agent: this bot's limit of turns per hour is used up (2 of 2 turns in the last hour). " +
		"You can send messages again "
	at := "at " + first.Add(time.Hour).Format("15:04 MST")
	if !strings.Contains(refusal.Text, want) || !strings.Contains(refusal.Text, at) {
		t.Errorf("refusal = %q, want %q … %q", refusal.Text, want, at)
	}
	h.waitLedgerFinal(k)
	if n := len(h.session(1).Sent()); n != 2 {
		t.Errorf("the agent got %d messages, want 2", n)
	}
}

// TestLimitAdmins: exempt_admins lets an admin past a used-up budget (and
// warns nobody); without it the admin is refused like anyone.
func TestLimitAdmins(t *testing.T) {
	for _, exemptAdmins := range []bool{true, false} {
		t.Run(map[bool]string{true: "exempt", false: "not exempt"}[exemptAdmins], func(t *testing.T) {
			h := start(t, setup{clock: bridgetest.NewFakeClock(limitNow), access: config.Access{Admins: []string{"dave"}},
				configure: withLimit(config.Limit{PerUser: config.Budget{USDPerMonth: 0.001}, ExemptAdmins: exemptAdmins})})
			k := key("T1")
			h.send(k, "m1", "dave", "one")
			h.waitText(k, "pong: one")
			h.waitLedgerFinal(k)
			h.send(k, "m2", "dave", "two")
			if exemptAdmins {
				h.waitText(k, "pong: two")
				h.send(k, "c1", "dave", "!cost")
				cost := h.waitText(k, "📉 Budget left:")
				if !strings.Contains(cost.Text, "you are an admin") || !strings.Contains(cost.Text, "• Your monthly budget: $0 of $0.001 left, resets on Apr 1 at 00:00 UTC (in 21d9h)") {
					t.Errorf("!cost = %q", cost.Text)
				}
			} else {
				r := h.waitText(k, "⛔")
				if !strings.Contains(r.Text, "your monthly budget is used up ($0.001 of $0.001 this month). You can send messages again on Apr 1 at 00:00 UTC (in 21d9h).") {
					t.Errorf("refusal = %q", r.Text)
				}
			}
			h.waitLedgerFinal(k)
			for _, m := range h.plat.Messages(k) {
				if strings.Contains(m.Text, "⚠️") {
					t.Errorf("unexpected warning: %q", m.Text)
				}
			}
		})
	}
}

// TestLimitAnonymousMessage: a message without an author (as a scheduled
// run sends) has no personal budget: it is not measured against everyone's
// spend as if it were one user's.
func TestLimitAnonymousMessage(t *testing.T) {
	h := start(t, setup{clock: bridgetest.NewFakeClock(limitNow),
		configure: withLimit(config.Limit{PerUser: config.Budget{USDPerDay: 0.001}})})
	k := key("T1")
	h.send(k, "m1", "alice", "one")
	h.waitText(k, "pong: one")
	h.waitLedgerFinal(k)
	h.send(k, "m2", "", "from nobody")
	h.waitText(k, "pong: from nobody")
	h.send(k, "m3", "alice", "two")
	h.waitText(k, "⛔ @alice")
}
