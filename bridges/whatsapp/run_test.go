package whatsapp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types/events"
)

// WhatsApp ending the session for good ends Run with an error that says
// what to do; Run disconnects either way.
func TestRunEndsOnPermanentDisconnect(t *testing.T) {
	tests := []struct {
		name string
		evt  any
		want string
	}{
		{"logged out", &events.LoggedOut{}, "whatsapp-link"},
		{"stream replaced", &events.StreamReplaced{}, "another client"},
		{"temporary ban", &events.TemporaryBan{Expire: time.Hour}, "ban"},
		{"client outdated", &events.ClientOutdated{}, "upgrade"},
		{"connect failure", &events.ConnectFailure{}, "connect failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeClient(nil)
			b := New(Options{Bot: "phone", Client: fake})
			done := make(chan error, 1)
			go func() { done <- b.Run(context.Background(), nil) }()
			waitFor(t, func() bool { return fake.IsConnected() })
			fake.Dispatch(tt.evt)
			select {
			case err := <-done:
				if !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Run = %v, want ErrDisconnected saying %q", err, tt.want)
				}
			case <-time.After(waitTimeout):
				t.Fatal("Run did not end")
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
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), nil) }()
	waitFor(t, fake.IsConnected)
	n := 0
	hook := b.reconnectHook(func() int { return n })
	for n = 1; n < maxReconnects; n++ {
		if !hook(errors.New("dial")) {
			t.Fatalf("gave up after %d", n)
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
