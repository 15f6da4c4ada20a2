package slack

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/slack/slackfake"
)

// After a "disconnect" envelope or a dropped socket the adapter
// reconnects; messages sent around the break are delivered exactly once.
func TestReconnectDeliversExactlyOnce(t *testing.T) {
	breaks := map[string]func(*slackfake.Server) bool{
		"disconnect envelope": (*slackfake.Server).Disconnect,
		"dropped socket":      (*slackfake.Server).DropSocket,
	}
	for name, brk := range breaks {
		t.Run(name, func(t *testing.T) {
			e := start(t, slackfake.WithoutEcho())
			before := e.fake.SendMessage("D1", "U1", "before", "")
			e.waitAcked(t, before)

			if !brk(e.fake) {
				t.Fatal("no socket to break")
			}
			during := e.fake.SendMessage("D1", "U1", "during", "") // queued until reconnect
			if err := e.fake.WaitForConnections(2, waitLong); err != nil {
				t.Fatal(err)
			}
			after := e.fake.SendMessage("D1", "U1", "after", "")
			for _, ts := range []string{during, after} {
				e.waitAcked(t, ts)
			}
			for _, ts := range []string{before, during, after} {
				if n := len(e.h.messagesFor(ts)); n != 1 {
					t.Errorf("message %s delivered %d times, want 1", ts, n)
				}
			}
		})
	}
}

// A socket that dies while the core is still accepting a message loses
// the ack; Slack resends the event on the new socket and the adapter
// acks it without delivering it twice.
func TestDroppedSocketMidMessage(t *testing.T) {
	e := start(t, slackfake.WithoutEcho())
	gate := make(chan struct{})
	e.h.mu.Lock()
	e.h.gate = gate
	e.h.mu.Unlock()
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "important"})
	waitUntil(t, waitLong, "handler called", func() bool {
		e.h.mu.Lock()
		defer e.h.mu.Unlock()
		return e.h.calls == 1
	})
	e.fake.DropSocket()
	if err := e.fake.WaitForConnections(2, waitLong); err != nil {
		t.Fatal(err)
	}
	close(gate)
	waitUntil(t, waitLong, "a retry of the envelope to be acked", func() bool {
		for _, en := range e.fake.EnvelopesFor(sent.TS) {
			if en.Retry > 0 && en.Acked {
				return true
			}
		}
		return false
	})
	if n := len(e.h.messagesFor(sent.TS)); n != 1 {
		t.Errorf("delivered %d times, want exactly once", n)
	}
}

// Bad credentials are fatal: Run gives up with ErrFatal instead of
// retrying forever.
func TestRunFatalOnInvalidAuth(t *testing.T) {
	fake := slackfake.New(t)
	b, logs := newBridge(t, fake, "xoxb-wrong-token-123")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := b.Run(ctx, newStub())
	if !errors.Is(err, ErrFatal) {
		t.Fatalf("Run = %v, want ErrFatal", err)
	}
	if ctx.Err() != nil {
		t.Error("Run only returned at the deadline")
	}
	_ = logs
}

func TestRunFatalOnInvalidAppToken(t *testing.T) {
	fake := slackfake.New(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	fake.FailMethod("apps.connections.open", "invalid_auth", -1)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := b.Run(ctx, newStub()); !errors.Is(err, ErrFatal) {
		t.Fatalf("Run = %v, want ErrFatal", err)
	}
}

// Transient failures of apps.connections.open are retried.
func TestRunRetriesTransientConnectFailures(t *testing.T) {
	fake := slackfake.New(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	fake.FailMethod("apps.connections.open", "internal_error", 2)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, newStub()) }()
	if err := fake.WaitForConnections(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v after cancel, want nil", err)
	}
	if n := fake.CallCount("apps.connections.open"); n < 3 {
		t.Errorf("%d apps.connections.open calls, want ≥ 3", n)
	}
}
