package agenttest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Harness is one fake model plus a HOME and a workdir for CLI sessions:
// what the agent and agent/pool tests start sessions on. This kit cannot
// name agent.Options or call agent.Start (agent's own tests import it), so
// each package turns a Harness into its Options and starts sessions
// through StartSession.
type Harness struct {
	TB      testing.TB
	Model   *fakemodel.Server
	Home    string
	Workdir string
}

// NewHarness skips tb when the claude CLI is missing (under CI that is a
// failure), starts a fake model closed at cleanup, and makes a HOME and a
// workdir in tb's temporary directory.
func NewHarness(tb testing.TB) *Harness {
	tb.Helper()
	testkit.RequireClaude(tb)
	return &Harness{TB: tb, Model: fakemodel.New(tb), Home: tb.TempDir(), Workdir: tb.TempDir()}
}

// Env is the fake model's environment as Options.Env.
func (h *Harness) Env() map[string]string { return EnvFrom(h.Model.Env()) }

// Closer is a session that can be closed (agent.Session).
type Closer interface {
	EventSource
	Close(ctx context.Context) error
}

// closeTimeout bounds the Close of a session at cleanup.
const closeTimeout = 30 * time.Second

// StartSession starts a session with start (given tb's logger, see
// testkit.Logger) and records its events; it fails tb when start fails.
// At cleanup it closes the session (waiting at most 30 s) and waits until
// its events are closed.
func StartSession[S Closer](tb testing.TB, start func(ctx context.Context, log *slog.Logger) (S, error)) (S, *Recorder) {
	tb.Helper()
	s, err := start(context.Background(), testkit.Logger(tb))
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	rec := Record(tb, s)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		_ = s.Close(ctx)
		rec.WaitClosed(tb)
	})
	return s, rec
}
