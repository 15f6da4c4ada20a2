package pool

// The session harness of the agent package's helpers_test.go, copied: test
// files cannot be shared across packages.

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/ci"
	"github.com/google/uuid"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	egress.MaybeForward() // the test binary is the forwarder of sandboxes in network mode proxy
	goleak.VerifyTestMain(m)
}

// eventTimeout bounds every wait for a CLI event in the tests. The CLI
// starts in ~0.5 s; the machine may be loaded.
const eventTimeout = 60 * time.Second

// requireClaude skips the test when the claude CLI is not installed,
// except under CI where it fails.
func requireClaude(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("claude"); err != nil {
		if ci.Strict() {
			tb.Fatalf("claude CLI not found under CI: %v", err)
		}
		tb.Skipf("claude CLI not installed: %v", err)
	}
}

// testLogger logs through t.Log at debug level.
func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// cliEnvFrom turns fakemodel's KEY=VALUE list into Options.Env.
func cliEnvFrom(kv []string) map[string]string {
	env := map[string]string{}
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	return env
}

// harness is one fake model plus a HOME and workdir for CLI sessions.
type harness struct {
	t    testing.TB
	srv  *fakemodel.Server
	home string
	wd   string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	requireClaude(t)
	return &harness{t: t, srv: fakemodel.New(t), home: t.TempDir(), wd: t.TempDir()}
}

// opts returns Options for a new session on the fake model.
func (h *harness) opts() agent.Options {
	return agent.Options{
		Workdir:        h.wd,
		Home:           h.home,
		Env:            cliEnvFrom(h.srv.Env()),
		SessionID:      uuid.NewString(),
		ControlTimeout: 20 * time.Second,
		CloseGrace:     20 * time.Second,
	}
}

// start starts a session and records its events; cleanup closes it and
// drains the events.
func (h *harness) start(opts agent.Options) (*agent.Session, *recorder) {
	h.t.Helper()
	s, err := agent.Start(context.Background(), opts, testLogger(h.t))
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	rec := record(h.t, s)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Close(ctx)
		rec.waitClosed(h.t)
	})
	return s, rec
}

// recorder drains a session's events and lets a test wait for them.
type recorder struct {
	mu     sync.Mutex
	evs    []streamjson.Event
	cursor int
	closed bool
	wake   chan struct{}
}

func record(tb testing.TB, s *agent.Session) *recorder {
	r := &recorder{wake: make(chan struct{}, 1)}
	go func() {
		for ev := range s.Events() {
			tb.Logf("event %T %s", ev, briefEvent(ev))
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

func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// briefEvent is a short description for test logs.
func briefEvent(ev streamjson.Event) string {
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

// next waits for the first event after the cursor that matches pred,
// moves the cursor past it and returns it.
func (r *recorder) next(tb testing.TB, what string, pred func(streamjson.Event) bool) streamjson.Event {
	tb.Helper()
	deadline := time.After(eventTimeout)
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

// all returns a copy of every event so far.
func (r *recorder) all() []streamjson.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]streamjson.Event(nil), r.evs...)
}

// waitClosed waits until the events channel was closed.
func (r *recorder) waitClosed(tb testing.TB) {
	tb.Helper()
	deadline := time.After(eventTimeout)
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

// Typed waiting helpers.

func nextResult(tb testing.TB, r *recorder) streamjson.Result {
	tb.Helper()
	return r.next(tb, "a Result", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Result); return ok }).(streamjson.Result)
}

func nextPermission(tb testing.TB, r *recorder) streamjson.PermissionRequest {
	tb.Helper()
	return r.next(tb, "a PermissionRequest", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.PermissionRequest); return ok }).(streamjson.PermissionRequest)
}

func nextExit(tb testing.TB, r *recorder) streamjson.Exit {
	tb.Helper()
	return r.next(tb, "the Exit", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Exit); return ok }).(streamjson.Exit)
}

// send sends text with a fresh uuid and returns the uuid.
func send(tb testing.TB, s *agent.Session, text string) string {
	tb.Helper()
	id := uuid.NewString()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, streamjson.UserMessage{UUID: id, Text: text}); err != nil {
		tb.Fatalf("Send(%q): %v", text, err)
	}
	return id
}

func respond(tb testing.TB, s *agent.Session, id string, d streamjson.Decision) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Respond(ctx, id, d); err != nil {
		tb.Fatalf("Respond(%s): %v", id, err)
	}
}

// waitUntil polls cond until it holds or the timeout passes.
func waitUntil(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
