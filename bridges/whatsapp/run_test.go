package whatsapp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
