package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// attempts records the core's attempts to post the agent's replies (texts
// containing "pong") by the fake clock, failing them with fail's error.
type attempts struct {
	mu    sync.Mutex
	clock *bridgetest.FakeClock
	fail  func(now time.Time) error
	at    []time.Time
}

func (a *attempts) install(plat *bridgetest.Platform) {
	plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if !strings.Contains(m.Text, "pong") {
			return nil
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		now := a.clock.Now()
		a.at = append(a.at, now)
		return a.fail(now)
	})
}

func (a *attempts) n() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// nextAttempt moves the fake clock to the next retry, which must come
// exactly want after the last attempt (not a millisecond earlier).
func (a *attempts) nextAttempt(t *testing.T, want time.Duration) {
	t.Helper()
	testkit.WaitUntil(t, "the retry timer", waitTimeout, func() bool { return a.clock.Pending() == 1 })
	n := a.n()
	a.clock.Advance(want - time.Millisecond)
	if a.clock.Pending() != 1 || a.n() != n {
		t.Fatalf("attempt %d came before the %s backoff", n+1, want)
	}
	a.clock.Advance(time.Millisecond)
	testkit.WaitUntil(t, fmt.Sprintf("attempt %d after %s", n+1, want), waitTimeout, func() bool { return a.n() == n+1 })
}

// TestOutboxPermanentErrorFailsAtOnce: a reply the platform refuses for
// good is not retried: one attempt, reported in the conversation, logged,
// counted, and nothing is left pending.
func TestOutboxPermanentErrorFailsAtOnce(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Now())
	lim := defaultLimits()
	lim.Title = "Slack"
	plat := bridgetest.New(lim)
	a := &attempts{clock: clock, fail: func(time.Time) error { return bridges.Permanent(errors.New("channel_not_found")) }}
	a.install(plat)
	reg := prometheus.NewRegistry()
	h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Second, metrics: metrics.New(reg)})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	notice := h.waitText(k, "could not be posted (")
	if !strings.Contains(notice.Text, "channel_not_found") {
		t.Errorf("notice = %q", notice.Text)
	}
	if a.n() != 1 || clock.Pending() != 0 {
		t.Errorf("attempts = %d, timers = %d; want one attempt and no retry", a.n(), clock.Pending())
	}
	if !strings.Contains(h.logs.String(), "reply could not be posted; giving up") || !strings.Contains(h.logs.String(), "reason=permanent") {
		t.Error("giving up was not logged as an error with its reason")
	}
	rows, err := h.st.PendingOutbox(context.Background())
	if err != nil || len(rows) != 0 {
		t.Errorf("pending replies = %d, %v; want none", len(rows), err)
	}
	if got := testkit.CounterValue(t, reg, "agentbridge_outbox_failed_total", map[string]string{"bot": "bot", "reason": "permanent"}); got != 1 {
		t.Errorf("agentbridge_outbox_failed_total{reason=permanent} = %v, want 1", got)
	}
}

// TestOutboxBackoffCappedAtAMinute: transient failures are retried with
// doubling delays from OutboxBackoff that never exceed a minute, for as
// long as the outage lasts (well past the old limit of five attempts).
func TestOutboxBackoffCappedAtAMinute(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Now())
	lim := defaultLimits()
	lim.Title = "Slack"
	plat := bridgetest.New(lim)
	a := &attempts{clock: clock, fail: func(time.Time) error { return errors.New("HTTP 503 Service Unavailable") }}
	a.install(plat)
	h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Second})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	testkit.WaitUntil(t, "the first attempt", waitTimeout, func() bool { return a.n() == 1 })
	for _, d := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60, 60} {
		a.nextAttempt(t, d*time.Second)
	}
	conv := h.conversation(k)
	testkit.WaitUntil(t, "the 11th failed attempt recorded", waitTimeout, func() bool {
		rows, err := h.st.PendingOutboxForConversation(context.Background(), conv.ID)
		return err == nil && len(rows) == 1 && rows[0].Attempts == 11 && strings.Contains(rows[0].LastError, "503")
	})
	if strings.Contains(h.logs.String(), "giving up") {
		t.Error("gave up during a five-minute outage")
	}
}

// TestOutboxGivesUpAfterDeliveryWindow: a reply that keeps failing
// transiently waits until it is older than delivery.give_up_after, then is
// given up visibly: a notice in the conversation, an error in the log and
// agentbridge_outbox_failed_total{reason="expired"}.
func TestOutboxGivesUpAfterDeliveryWindow(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Now())
	lim := defaultLimits()
	lim.Title = "Slack"
	plat := bridgetest.New(lim)
	a := &attempts{clock: clock, fail: func(time.Time) error { return errors.New("HTTP 503 Service Unavailable") }}
	a.install(plat)
	reg := prometheus.NewRegistry()
	h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Second,
		metrics: metrics.New(reg), configure: func(c *config.Config) { c.Delivery.GiveUpAfter = 10 * time.Minute }})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	testkit.WaitUntil(t, "the first attempt", waitTimeout, func() bool { return a.n() == 1 })
	start := clock.Now()
	conv := h.conversation(k)
	for clock.Now().Sub(start) < 9*time.Minute {
		testkit.WaitUntil(t, "the retry timer", waitTimeout, func() bool { return clock.Pending() == 1 })
		n := a.n()
		clock.Advance(time.Minute)
		testkit.WaitUntil(t, "the next attempt", waitTimeout, func() bool { return a.n() > n })
	}
	if rows, _ := h.st.PendingOutboxForConversation(context.Background(), conv.ID); len(rows) != 1 {
		t.Fatalf("the reply was given up before delivery.give_up_after (%d pending)", len(rows))
	}
	gaveUp := func() bool { return strings.Contains(h.logs.String(), "giving up") }
	for i := 0; i < 3 && !gaveUp(); i++ { // the attempts around 10 minutes
		testkit.WaitUntil(t, "the retry timer", waitTimeout, func() bool { return clock.Pending() == 1 || gaveUp() })
		n := a.n()
		clock.Advance(time.Minute)
		testkit.WaitUntil(t, "the next attempt", waitTimeout, func() bool { return a.n() > n || gaveUp() })
	}
	notice := h.waitText(k, "could not be posted: Slack kept refusing it for 1")
	if !strings.Contains(notice.Text, "503") {
		t.Errorf("notice = %q", notice.Text)
	}
	testkit.WaitUntil(t, "no retry left", waitTimeout, func() bool { return clock.Pending() == 0 })
	if last := a.at[len(a.at)-1]; last.Sub(start) < 10*time.Minute || last.Sub(start) > 11*time.Minute {
		t.Errorf("gave up %s after the first attempt, want between 10 and 11 minutes", last.Sub(start))
	}
	sums, err := h.core.OutboxSummary(context.Background())
	if err != nil || len(sums) != 1 || sums[0].Failed != 1 || sums[0].Waiting != 0 {
		t.Errorf("OutboxSummary = %+v, %v; want the reply failed, none waiting", sums, err)
	}
	if !strings.Contains(h.logs.String(), "reason=expired") {
		t.Error("giving up was not logged with its reason")
	}
	if got := testkit.CounterValue(t, reg, "agentbridge_outbox_failed_total", map[string]string{"bot": "bot", "reason": "expired"}); got != 1 {
		t.Errorf("agentbridge_outbox_failed_total{reason=expired} = %v, want 1", got)
	}
}

// TestOutboxLateReplySaysSo: replies of two turns produced during a
// three-minute outage are posted after it, once each and in order; the
// first says that it is late, the one that waited behind it does not. The
// outbox gauges show them while they wait.
func TestOutboxLateReplySaysSo(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Now())
	lim := defaultLimits()
	lim.Title = "Slack"
	plat := bridgetest.New(lim)
	outageEnds := clock.Now().Add(3 * time.Minute)
	a := &attempts{clock: clock, fail: func(now time.Time) error {
		if now.Before(outageEnds) {
			return errors.New("HTTP 503 Service Unavailable")
		}
		return nil
	}}
	a.install(plat)
	h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Second})
	reg := prometheus.NewRegistry()
	reg.MustRegister(core.NewOutboxCollector(h.core))
	k := key("T1")
	h.send(k, "m1", "alice", "first")
	testkit.WaitUntil(t, "the first attempt", waitTimeout, func() bool { return a.n() == 1 })
	h.send(k, "m2", "alice", "second")
	h.waitLedgerFinal(k)
	testkit.WaitUntil(t, "both replies waiting", waitTimeout, func() bool {
		n, err := testutil.GatherAndCount(reg, "agentbridge_outbox_waiting")
		return err == nil && n == 1 && strings.Contains(gatherText(t, reg), `agentbridge_outbox_waiting{bot="bot"} 2`)
	})
	posted := func() int {
		var n int
		for _, m := range plat.Messages(k) {
			if strings.Contains(m.Text, "pong") {
				n++
			}
		}
		return n
	}
	for posted() < 2 && clock.Now().Before(outageEnds.Add(time.Minute)) {
		testkit.WaitUntil(t, "the retry timer", waitTimeout, func() bool { return clock.Pending() >= 1 || posted() == 2 })
		clock.Advance(time.Second)
	}
	testkit.WaitUntil(t, "both replies posted", waitTimeout, func() bool { return posted() == 2 })
	var got []string
	for _, m := range plat.Messages(k) {
		if strings.Contains(m.Text, "pong") {
			got = append(got, m.Text)
		}
	}
	want := []string{"pong: first\n\n_0.0s · $0.0010_\n\n_(delivered after a Slack outage of 3 min)_", "pong: second\n\n_0.0s · $0.0010_"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replies = %q, want %q", got, want)
	}
	h.waitOutboxEmpty()
	if n, err := testutil.GatherAndCount(reg, "agentbridge_outbox_waiting"); err != nil || n != 0 {
		t.Errorf("agentbridge_outbox_waiting series after delivery = %d, %v; want none", n, err)
	}
}

func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			fmt.Fprintf(&b, "%s{", mf.GetName())
			for i, l := range m.GetLabel() {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%s=%q", l.GetName(), l.GetValue())
			}
			fmt.Fprintf(&b, "} %v\n", m.GetGauge().GetValue())
		}
	}
	return b.String()
}
