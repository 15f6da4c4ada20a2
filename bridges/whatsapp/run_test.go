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
	"github.com/agentbridge/agentbridge/bridges/bridgetest"
	"github.com/agentbridge/agentbridge/config"
)

// stateRecorder is a core stand-in that records the adapter's state
// reports (its other Handler methods are not called here).
type stateRecorder struct {
	bridges.Handler
	mu     sync.Mutex
	states []bridges.BotState
}

func (r *stateRecorder) ReportState(s bridges.BotState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
}

func (r *stateRecorder) last() bridges.BotState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.states) == 0 {
		return bridges.BotState{}
	}
	return r.states[len(r.states)-1]
}

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
		{"stream replaced", &events.StreamReplaced{}, "another client", bridges.RemedyRelink},
		{"temporary ban", &events.TemporaryBan{Expire: time.Hour}, "wait until the ban ends at", bridges.RemedyWait},
		{"client outdated", &events.ClientOutdated{}, "upgrade", bridges.RemedyUpgrade},
		{"connect failure", &events.ConnectFailure{}, "connect failure", bridges.RemedyRestart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeClient(nil)
			b := New(Options{Bot: "phone", Client: fake, ConfigPath: "bridge.yaml"})
			rec := &stateRecorder{}
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background(), rec) }()
			waitFor(t, func() bool { return fake.IsConnected() })
			fake.Dispatch(&events.Connected{})
			if s := rec.last(); s.State != bridges.ConnConnected {
				t.Errorf("state after Connected = %+v", s)
			}
			fake.Dispatch(&events.Disconnected{})
			if s := rec.last(); s.State != bridges.ConnReconnecting {
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
			if s := rec.last(); s.State != bridges.ConnFailed || s.Remedy != tt.remedy || !strings.Contains(s.Hint+s.Reason, tt.want) {
				t.Errorf("reported %+v, want failed (%s)", s, tt.remedy)
			}
			if fake.IsConnected() {
				t.Error("still connected")
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Run retries a failed connection with back-off, gives up after
// maxConnectAttempts, and does not retry a deleted device.
func TestRunConnectRetries(t *testing.T) {
	flaky := errors.New("dial: connection refused")
	tests := []struct {
		name     string
		errs     []error
		wantErr  error // nil: Run connects and runs until ctx ends
		attempts int
	}{
		{"succeeds after failures", []error{flaky, flaky}, nil, 3},
		{"gives up", slices.Repeat([]error{flaky}, maxConnectAttempts), flaky, maxConnectAttempts},
		{"device deleted", []error{store.ErrDeviceDeleted}, ErrDisconnected, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeClient(nil)
			fake.connectErrs = tt.errs
			b := New(Options{Bot: "phone", Client: fake, ConnectBackoff: time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- b.Run(ctx, nil) }()
			if tt.wantErr == nil {
				waitFor(t, fake.IsConnected)
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
			n := 0
			for _, c := range fake.Calls() {
				if c.Op == "Connect" {
					n++
				}
			}
			if n != tt.attempts {
				t.Errorf("%d connect attempts, want %d", n, tt.attempts)
			}
		})
	}
}

// After too many failed reconnects in a row the hook stops whatsmeow's
// retries and Run ends.
func TestReconnectHookGivesUp(t *testing.T) {
	fake := newFakeClient(nil)
	b := New(Options{Bot: "phone", Client: fake})
	rec := &stateRecorder{}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), rec) }()
	waitFor(t, fake.IsConnected)
	n := 0
	hook := b.reconnectHook(func() int { return n })
	for n = 1; n < maxReconnects; n++ {
		if !hook(errors.New("dial")) {
			t.Fatalf("gave up after %d", n)
		}
		if s := rec.last(); s.State != bridges.ConnReconnecting || s.Attempt != n || s.Reason != "dial" {
			t.Fatalf("reported %+v after %d failed reconnects", s, n)
		}
	}
	if hook(errors.New("dial")) {
		t.Fatal("did not give up")
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrDisconnected) {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Run did not end")
	}
}

// Through the real core: a logged-out WhatsApp bot is marked failed with
// the relink remedy while another bot of the same bridge keeps answering.
func TestLoggedOutStopsOnlyThisBot(t *testing.T) {
	fake := newFakeClient(nil)
	b := New(Options{Bot: "phone", Client: fake, ConfigPath: "bridge.yaml"})
	other := bridgetest.New(bridges.Limits{MaxMessageRunes: 4000, CanButtons: true})
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*config.Agent{"coder": {Name: "coder", Command: "claude", Workdir: t.TempDir(), MaxLive: 2,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{
			{Name: "phone", Platform: Name, Agent: "coder", Settings: &Config{}},
			{Name: "chat", Platform: "slack", Agent: "coder"},
		},
	}
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"phone": b, "chat": other}, nil)
	waitFor(t, fake.IsConnected)
	fake.Dispatch(&events.Connected{})
	fake.Dispatch(&events.LoggedOut{})
	var phone bridges.BotStatus
	waitFor(t, func() bool {
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
