package agent

// The session harness of the tests: the fake model and Start here, the
// rest from agent/agenttest under the names the tests use.

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

func TestMain(m *testing.M) {
	// The test binary is also the launcher of sandboxes in network mode
	// proxy: package launch (imported through agent/network.go) runs it.
	goleak.VerifyTestMain(m)
}

// eventTimeout bounds every wait for a CLI event in the tests.
const eventTimeout = agenttest.EventTimeout

type recorder = agenttest.Recorder

func requireClaude(tb testing.TB)                { tb.Helper(); agenttest.RequireClaude(tb) }
func testLogger(tb testing.TB) *slog.Logger      { return agenttest.Logger(tb) }
func cliEnvFrom(kv []string) map[string]string   { return agenttest.EnvFrom(kv) }
func record(tb testing.TB, s *Session) *recorder { return agenttest.Record(tb, s) }

func nextResult(tb testing.TB, r *recorder) streamjson.Result {
	tb.Helper()
	return agenttest.NextResult(tb, r)
}

func nextPermission(tb testing.TB, r *recorder) streamjson.PermissionRequest {
	tb.Helper()
	return agenttest.NextPermission(tb, r)
}

func nextExit(tb testing.TB, r *recorder) streamjson.Exit {
	tb.Helper()
	return agenttest.NextExit(tb, r)
}

func nextLifecycle(tb testing.TB, r *recorder, uuid, state string) streamjson.Lifecycle {
	tb.Helper()
	return agenttest.NextLifecycle(tb, r, uuid, state)
}

func send(tb testing.TB, s *Session, text string) string {
	tb.Helper()
	return agenttest.Send(tb, s, text)
}

func respond(tb testing.TB, s *Session, id string, d streamjson.Decision) {
	tb.Helper()
	agenttest.Respond(tb, s, id, d)
}

func waitUntil(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	agenttest.WaitUntil(tb, what, timeout, cond)
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
func (h *harness) opts() Options {
	return Options{
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
func (h *harness) start(opts Options) (*Session, *recorder) {
	h.t.Helper()
	s, err := Start(context.Background(), opts, testLogger(h.t))
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	rec := record(h.t, s)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Close(ctx)
		rec.WaitClosed(h.t)
	})
	return s, rec
}
