package whatsapp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// WhatsApp ending the session for good ends Run with a Failure that says
// what to do (and wraps ErrDisconnected), reported as the bot's failed
// state; Run disconnects either way. Connected and lost connections are
// reported too.
func TestRunEndsOnPermanentDisconnect(t *testing.T) {
	tests := []struct {
		name   string
		evt    any
		want   string
		remedy string
	}{
		{"logged out", &events.LoggedOut{}, "bridge whatsapp-link -config bridge.yaml -bot phone -relink", bridges.RemedyRelink},
		// Issue 24, finding 9: remedies that match the cause.
		{"stream replaced", &events.StreamReplaced{}, "do not relink", bridges.RemedyRestart},
		{"account locked", &events.LoggedOut{Reason: events.ConnectFailureMainDeviceGone}, "unlock the account", bridges.RemedyAccount},
		{"number banned", &events.LoggedOut{Reason: events.ConnectFailureUnknownLogout}, "relinking does not help", bridges.RemedyAccount},
		{"temporary ban", &events.TemporaryBan{Expire: time.Hour}, "wait until the ban ends at", bridges.RemedyWait},
		{"client outdated", &events.ClientOutdated{}, "upgrade", bridges.RemedyUpgrade},
		{"connect failure", &events.ConnectFailure{}, "connect failure", bridges.RemedyRestart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeClient(nil)
			b := New(Options{Bot: "phone", Client: fake, ConfigPath: "bridge.yaml"})
			rec := &platformtest.StateRecorder{}
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background(), rec) }()
			testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return fake.IsConnected() })
			fake.Dispatch(&events.Connected{})
			if s := rec.Last(); s.State != bridges.ConnConnected {
				t.Errorf("state after Connected = %+v", s)
			}
			fake.Dispatch(&events.Disconnected{})
			if s := rec.Last(); s.State != bridges.ConnReconnecting {
				t.Errorf("state after Disconnected = %+v", s)
			}
			fake.Dispatch(tt.evt)
			select {
			case err := <-done:
				f, ok := errors.AsType[*bridges.Failure](err)
				if !ok || !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), tt.want) || f.Remedy != tt.remedy {
					t.Errorf("Run = %v, want a Failure (%s) wrapping ErrDisconnected saying %q", err, tt.remedy, tt.want)
				}
				if ok && tt.remedy == bridges.RemedyWait && (f.Until.Before(time.Now().Add(59*time.Minute)) || f.Until.After(time.Now().Add(time.Hour))) {
					t.Errorf("ban ends at %v, want in an hour", f.Until)
				}
			case <-time.After(waitTimeout):
				t.Fatal("Run did not end")
			}
			if s := rec.Last(); s.State != bridges.ConnFailed || s.Remedy != tt.remedy || !strings.Contains(s.Hint+s.Reason, tt.want) {
				t.Errorf("reported %+v, want failed (%s)", s, tt.remedy)
			}
			if fake.IsConnected() {
				t.Error("still connected")
			}
		})
	}
}

// Run retries a failed connection at start-up with back-off and never
// gives up on a transient error (here 300 in a row, about three hours of
// the default back-off, in virtual time); a deleted device is permanent
// and not retried. Every wait is > 0 and within the cap.
func TestRunConnectRetries(t *testing.T) {
	flaky := errors.New("dial: connection refused")
	tests := []struct {
		name     string
		errs     []error
		wantErr  error // nil: Run connects and runs until ctx ends
		attempts int
	}{
		{"succeeds after failures", []error{flaky, flaky}, nil, 3},
		{"never gives up", slices.Repeat([]error{flaky}, 300), nil, 301},
		{"device deleted", []error{store.ErrDeviceDeleted}, ErrDisconnected, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeClient(nil)
			fake.connectErrs = tt.errs
			var mu sync.Mutex
			var waited []time.Duration
			pause := func(ctx context.Context, d time.Duration) bool {
				mu.Lock()
				waited = append(waited, d)
				mu.Unlock()
				return ctx.Err() == nil
			}
			b := New(Options{Bot: "phone", Client: fake, Reconnect: bridges.Backoff{Pause: pause}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- b.Run(ctx, nil) }()
			if tt.wantErr == nil {
				testkit.WaitUntil(t, "the condition", waitTimeout, fake.IsConnected)
				cancel()
			}
			select {
			case err := <-done:
				if (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Errorf("Run = %v, want %v", err, tt.wantErr)
				}
			case <-time.After(waitTimeout):
				t.Fatal("Run did not end")
			}
			if n := countOp(fake, "Connect"); n != tt.attempts {
				t.Errorf("%d connect attempts, want %d", n, tt.attempts)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(waited) != tt.attempts-1 {
				t.Errorf("%d waits for %d attempts", len(waited), tt.attempts)
			}
			for i, d := range waited {
				if d <= 0 || d > bridges.DefaultReconnectMax {
					t.Errorf("wait %d = %v, want in (0, %v]", i, d, bridges.DefaultReconnectMax)
				}
			}
		})
	}
}

func countOp(fake *fakeClient, op string) int {
	n := 0
	for _, c := range fake.Calls() {
		if c.Op == op {
			n++
		}
	}
	return n
}

// WhatsApp unreachable for thirty minutes after the connection drops, in
// virtual time with the production back-off, through the real core: Run
// reconnects by itself (whatsmeow's capless reconnect is off) and never
// gives up; the bot is reconnecting all along since the drop, with the
// last error and a growing attempt count; no wait exceeds the cap and
// the first attempt after the network's return comes within a minute.
// Keep-alives failing for too long make Run drop the socket and connect
// again. (Permanent events still stop the bot with their remedy:
// TestRunEndsOnPermanentDisconnect.)
func TestReconnectsForever(t *testing.T) {
	fake := newFakeClient(nil)
	var outage bridgetest.Outage
	b := New(Options{Bot: "phone", Client: fake, ConfigPath: "bridge.yaml", Reconnect: bridges.Backoff{Pause: outage.Pause}})
	cfg := bridgetest.Config(t, &config.Bot{Name: "phone", Platform: Name, Agent: "coder", Settings: &Config{}})
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"phone": b}, nil)
	state := bridgetest.BotState(core.Core, "phone")
	testkit.WaitUntil(t, "the condition", waitTimeout, fake.IsConnected)
	fake.Dispatch(&events.Connected{})
	testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return state().State == bridges.ConnConnected })

	flaky := errors.New("dial tcp: lookup web.whatsapp.com: no such host")
	outage.Begin(core, "phone", 30*time.Minute, func() {
		fake.mu.Lock()
		fake.connectErrs = nil
		fake.mu.Unlock()
	})
	fake.mu.Lock()
	fake.connectErrs = slices.Repeat([]error{flaky}, 100000)
	fake.connected = false
	fake.mu.Unlock()
	fake.Dispatch(&events.Disconnected{})
	testkit.WaitUntil(t, "the condition", waitTimeout, fake.IsConnected)
	n := outage.Check(t, bridges.DefaultReconnectMax, time.Minute)
	t.Logf("30-minute outage: %d waits, %d connect attempts", n, countOp(fake, "Connect"))
	if s := state(); s.State != bridges.ConnReconnecting || !strings.Contains(s.Reason, "no such host") {
		t.Errorf("state before WhatsApp accepted the login = %+v", s)
	}
	fake.Dispatch(&events.Connected{})
	if s := state(); s.State != bridges.ConnConnected || s.Attempt != 0 {
		t.Errorf("state after the outage = %+v", s)
	}

	// Keep-alives unanswered for longer than whatsmeow allows: Run drops
	// the half-dead socket and connects again.
	disconnects := countOp(fake, "Disconnect")
	fake.Dispatch(&events.KeepAliveTimeout{ErrorCount: 1, LastSuccess: time.Now().Add(-time.Minute)})
	fake.Dispatch(&events.KeepAliveTimeout{ErrorCount: 9, LastSuccess: time.Now().Add(-4 * time.Minute)})
	testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return countOp(fake, "Disconnect") == disconnects+1 && fake.IsConnected() })
	if s := state(); s.State != bridges.ConnReconnecting || !strings.Contains(s.Reason, "keep-alives") {
		t.Errorf("state after keep-alives failed = %+v", s)
	}
	fake.Dispatch(&events.Connected{})
}

// Through the real core: a logged-out WhatsApp bot is marked failed with
// the relink remedy while another bot of the same bridge keeps answering.
func TestLoggedOutStopsOnlyThisBot(t *testing.T) {
	fake := newFakeClient(nil)
	b := New(Options{Bot: "phone", Client: fake, ConfigPath: "bridge.yaml"})
	other := bridgetest.New(bridges.Limits{MaxMessageRunes: 4000, CanButtons: true})
	cfg := bridgetest.Config(t,
		&config.Bot{Name: "phone", Platform: Name, Agent: "coder", Settings: &Config{}},
		&config.Bot{Name: "chat", Platform: "slack", Agent: "coder"})
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"phone": b, "chat": other}, nil)
	testkit.WaitUntil(t, "the condition", waitTimeout, fake.IsConnected)
	fake.Dispatch(&events.Connected{})
	fake.Dispatch(&events.LoggedOut{})
	var phone bridges.BotStatus
	testkit.WaitUntil(t, "the condition", waitTimeout, func() bool {
		for _, s := range core.BotStates() {
			if s.Bot == "phone" {
				phone = s
			}
		}
		return phone.State == bridges.ConnFailed
	})
	if phone.Remedy != bridges.RemedyRelink || !strings.Contains(phone.Hint, "bridge whatsapp-link -config bridge.yaml -bot phone -relink") {
		t.Errorf("phone state = %+v", phone)
	}
	k := bridges.ConversationKey{Bot: "chat", Channel: "C1", Thread: "T1"}
	if err := other.Send(t.Context(), bridges.Inbound{Key: k, MsgID: "m1", UserID: "u", UserName: "u", Text: "still here?"}); err != nil {
		t.Fatal(err)
	}
	other.WaitFor(t, k, waitTimeout, "the other bot's answer", func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "pong: still here?") })
}

// WhatsApp accepting the socket but closing it before the login
// completes (a 503 at login, which whatsmeow reports only as a
// disconnection) counts as a failed attempt: the reconnects back off
// instead of hammering WhatsApp, and the state says so.
func TestClosedBeforeLoginBacksOff(t *testing.T) {
	fake := newFakeClient(nil)
	waits := make(chan time.Duration, 10)
	pause := func(ctx context.Context, d time.Duration) bool { waits <- d; return ctx.Err() == nil }
	b := New(Options{Bot: "phone", Client: fake, Reconnect: bridges.Backoff{Pause: pause}})
	rec := &platformtest.StateRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, rec) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	testkit.WaitUntil(t, "the condition", waitTimeout, fake.IsConnected)
	for i := 1; i <= 4; i++ {
		connects := countOp(fake, "Connect")
		fake.mu.Lock()
		fake.connected = false
		fake.mu.Unlock()
		fake.Dispatch(&events.Disconnected{})
		if s := rec.Last(); s.State != bridges.ConnReconnecting || s.Attempt != i || !strings.Contains(s.Reason, "before the login completed") {
			t.Errorf("state after close %d = %+v", i, s)
		}
		select {
		case d := <-waits:
			if ceil := time.Second << (i - 1); d < ceil/2 || d > ceil {
				t.Errorf("wait %d = %v, want in [%v, %v]", i, d, ceil/2, ceil)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("no back-off before reconnect %d", i)
		}
		testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return countOp(fake, "Connect") == connects+1 })
	}
	fake.Dispatch(&events.Connected{})
	if s := rec.Last(); s.State != bridges.ConnConnected {
		t.Errorf("state after login = %+v", s)
	}
}
