package core_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestOutboxWakesWhenPlatformBack: replies waiting through an outage go
// at the first sign that the platform is back — its adapter reconnected,
// or an event arrived — in order and once each, without waiting for the
// outbox's back-off timer (which the test never lets fire before).
func TestOutboxWakesWhenPlatformBack(t *testing.T) {
	signs := map[string]func(t *testing.T, h *harness, plat *bridgetest.Platform){
		"reconnect": func(t *testing.T, _ *harness, plat *bridgetest.Platform) {
			hd, err := plat.Handler(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			hd.(bridges.StateReporter).ReportState(bridges.BotState{State: bridges.ConnConnected})
		},
		"event": func(t *testing.T, h *harness, _ *bridgetest.Platform) {
			h.send(key("T2"), "m3", "alice", "!status") // answered without the agent (no "pong")
		},
	}
	for name, sign := range signs {
		t.Run(name, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(time.Now())
			lim := defaultLimits()
			lim.Title = "Slack"
			plat := bridgetest.New(lim)
			var down atomic.Bool
			down.Store(true)
			a := &attempts{clock: clock, fail: func(time.Time) error {
				if down.Load() {
					return errors.New("HTTP 503 Service Unavailable")
				}
				return nil
			}}
			a.install(plat)
			h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Second})
			k := key("T1")
			h.send(k, "m1", "alice", "first")
			testkit.WaitUntil(t, "the first attempt", waitTimeout, func() bool { return a.n() == 1 })
			h.send(k, "m2", "alice", "second")
			h.waitLedgerFinal(k)
			a.nextAttempt(t, time.Second)
			a.nextAttempt(t, 2*time.Second)
			// The next retry is 4 s away; 1 s passes, the platform returns.
			testkit.WaitUntil(t, "the retry timer", waitTimeout, func() bool { return clock.Pending() == 1 })
			clock.Advance(time.Second)
			if n := a.n(); n != 3 {
				t.Fatalf("%d attempts before the platform returned, want 3", n)
			}
			down.Store(false)
			sign(t, h, plat)

			replies := func() []string {
				var got []string
				for _, m := range plat.Messages(k) {
					if strings.Contains(m.Text, "pong") {
						got = append(got, m.Text)
					}
				}
				return got
			}
			testkit.WaitUntil(t, "the waiting replies posted before the back-off ends", waitTimeout, func() bool { return len(replies()) == 2 })
			h.waitOutboxEmpty()
			// The back-off timer fires now (its input queued as Advance
			// returns): nothing is left to post. A later message's answer
			// shows that the worker handled it.
			clock.Advance(time.Minute)
			h.send(k, "m4", "alice", "third")
			testkit.WaitUntil(t, "the third reply", waitTimeout, func() bool { return len(replies()) == 3 })
			got := replies()
			if len(got) != 3 || !strings.HasPrefix(got[0], "pong: first") || !strings.HasPrefix(got[1], "pong: second") ||
				!strings.HasPrefix(got[2], "pong: third") {
				t.Errorf("replies = %q, want first, second, third, once each", got)
			}
			if n := a.n(); n != 6 {
				t.Errorf("%d attempts to post the replies, want 6 (3 failed, then each once)", n)
			}
		})
	}
}
