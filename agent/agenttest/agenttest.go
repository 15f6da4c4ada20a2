// Package agenttest is the test kit of the agent and agent/pool tests:
// the session harness (a fake model, HOME and workdir; a started session
// recorded and closed at cleanup), a recorder of a session's events with
// waits for them, sending and answering on a session, and the benchmarks'
// steps (the CLI check, the logger and waits are internal/testkit's). It
// cannot name agent.Options or call agent.Start (agent's own tests import
// it), so each package turns a Harness into its Options and passes its
// Start to StartSession.
package agenttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/streamjson"
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

// Session is a live session as the benchmarks drive it (agent.Session).
type Session interface {
	EventSource
	Sender
	Close(ctx context.Context) error
}

// BenchResult reads events until a Result and returns it; it fails b on
// an Exit, on closed events or after EventTimeout.
func BenchResult(b *testing.B, events <-chan streamjson.Event) streamjson.Result {
	b.Helper()
	timeout := time.After(EventTimeout)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				b.Fatal("events closed before a result")
			}
			switch e := ev.(type) {
			case streamjson.Result:
				return e
			case streamjson.Exit:
				b.Fatalf("agent exited: %+v", e)
			}
		case <-timeout:
			b.Fatal("no result")
		}
	}
}

// BenchClose closes s and drains its events.
func BenchClose(b *testing.B, s Session) {
	b.Helper()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	for range s.Events() {
	}
}

// BenchSend sends text as a new message.
func BenchSend(b *testing.B, s Sender, text string) {
	b.Helper()
	if err := s.Send(context.Background(), streamjson.UserMessage{UUID: uuid.NewString(), Text: text}); err != nil {
		b.Fatal(err)
	}
}

// BenchFollowUps times one message on the live session s → its result,
// after one untimed warm-up message, and closes s at the end.
func BenchFollowUps(b *testing.B, s Session) {
	b.Helper()
	defer BenchClose(b, s)
	BenchSend(b, s, "warm up")
	BenchResult(b, s.Events())
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		BenchSend(b, s, fmt.Sprintf("follow-up %d", i))
		if r := BenchResult(b, s.Events()); r.IsError {
			b.Fatalf("result %+v", r)
		}
	}
}
