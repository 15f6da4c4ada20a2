// Package agenttest is the test kit of the agent and agent/pool tests:
// the claude CLI check, a test logger, a recorder of a session's events
// with waits for them, and sending and answering on a session. It cannot
// start a session itself (agent's own tests import it), so each package
// keeps its harness: the fake model and agent.Start.
package agenttest

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/ci"
)

// EventSource is a session's events (agent.Session).
type EventSource interface {
	Events() <-chan streamjson.Event
}

// Sender sends to a session and answers its permission requests
// (agent.Session).
type Sender interface {
	Send(ctx context.Context, m streamjson.UserMessage) error
	Respond(ctx context.Context, requestID string, d streamjson.Decision) error
}

// EventTimeout bounds every wait for a CLI event in the tests. The CLI
// starts in ~0.5 s; the machine may be loaded.
const EventTimeout = 60 * time.Second

// RequireClaude skips the test when the claude CLI is not installed,
// except under CI where it fails.
func RequireClaude(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("claude"); err != nil {
		if ci.Strict() {
			tb.Fatalf("claude CLI not found under CI: %v", err)
		}
		tb.Skipf("claude CLI not installed: %v", err)
	}
}

// Logger logs through t.Log at debug level.
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// EnvFrom turns fakemodel's KEY=VALUE list into Options.Env.
func EnvFrom(kv []string) map[string]string {
	env := map[string]string{}
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	return env
}

// Recorder drains a session's events and lets a test wait for them.
type Recorder struct {
	mu     sync.Mutex
	evs    []streamjson.Event
	cursor int
	closed bool
	wake   chan struct{}
}

func Record(tb testing.TB, s EventSource) *Recorder {
	r := &Recorder{wake: make(chan struct{}, 1)}
	go func() {
		for ev := range s.Events() {
			tb.Logf("event %T %s", ev, BriefEvent(ev))
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			r.mu.Unlock()
			r.signal()
		}
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.signal()
	}()
	return r
}

func (r *Recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// BriefEvent is a short description for test logs.
func BriefEvent(ev streamjson.Event) string {
	s := fmt.Sprintf("%+v", ev)
	switch e := ev.(type) {
	case streamjson.Init:
		s = fmt.Sprintf("session=%s model=%s mode=%s", e.SessionID, e.Model, e.PermissionMode)
	case streamjson.Result:
		s = fmt.Sprintf("subtype=%s is_error=%v origin=%q text=%q", e.Subtype, e.IsError, e.Origin, e.Text)
	case streamjson.PermissionRequest:
		s = fmt.Sprintf("id=%s tool=%s input=%s", e.RequestID, e.ToolName, e.Input)
	}
	return s[:min(len(s), 300)]
}

// Next waits for the first event after the cursor that matches pred,
// moves the cursor past it and returns it.
func (r *Recorder) Next(tb testing.TB, what string, pred func(streamjson.Event) bool) streamjson.Event {
	tb.Helper()
	deadline := time.After(EventTimeout)
	for {
		r.mu.Lock()
		for i := r.cursor; i < len(r.evs); i++ {
			if pred(r.evs[i]) {
				r.cursor = i + 1
				ev := r.evs[i]
				r.mu.Unlock()
				return ev
			}
		}
		closed := r.closed
		r.mu.Unlock()
		if closed {
			tb.Fatalf("events closed while waiting for %s", what)
		}
		select {
		case <-r.wake:
		case <-deadline:
			tb.Fatalf("timed out waiting for %s", what)
		}
	}
}

// All returns a copy of every event so far.
func (r *Recorder) All() []streamjson.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]streamjson.Event(nil), r.evs...)
}

// WaitClosed waits until the events channel was closed.
func (r *Recorder) WaitClosed(tb testing.TB) {
	tb.Helper()
	deadline := time.After(EventTimeout)
	for {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return
		}
		select {
		case <-r.wake:
		case <-deadline:
			tb.Fatalf("events channel not closed")
		}
	}
}

// NextResult waits for the next Result.
func NextResult(tb testing.TB, r *Recorder) streamjson.Result {
	tb.Helper()
	return r.Next(tb, "a Result", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Result); return ok }).(streamjson.Result)
}

// NextPermission waits for the next PermissionRequest.
func NextPermission(tb testing.TB, r *Recorder) streamjson.PermissionRequest {
	tb.Helper()
	return r.Next(tb, "a PermissionRequest", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.PermissionRequest); return ok }).(streamjson.PermissionRequest)
}

// NextExit waits for the Exit.
func NextExit(tb testing.TB, r *Recorder) streamjson.Exit {
	tb.Helper()
	return r.Next(tb, "the Exit", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Exit); return ok }).(streamjson.Exit)
}

// NextLifecycle waits for the lifecycle state of message uuid.
func NextLifecycle(tb testing.TB, r *Recorder, uuid, state string) streamjson.Lifecycle {
	tb.Helper()
	return r.Next(tb, "lifecycle "+state+" of "+uuid, func(ev streamjson.Event) bool {
		l, ok := ev.(streamjson.Lifecycle)
		return ok && l.UUID == uuid && l.State == state
	}).(streamjson.Lifecycle)
}

// Send sends text with a fresh uuid and returns the uuid.
func Send(tb testing.TB, s Sender, text string) string {
	tb.Helper()
	id := uuid.NewString()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, streamjson.UserMessage{UUID: id, Text: text}); err != nil {
		tb.Fatalf("Send(%q): %v", text, err)
	}
	return id
}

// Respond answers permission request id.
func Respond(tb testing.TB, s Sender, id string, d streamjson.Decision) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Respond(ctx, id, d); err != nil {
		tb.Fatalf("Respond(%s): %v", id, err)
	}
}

// WaitUntil polls cond until it holds or the timeout passes.
func WaitUntil(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
