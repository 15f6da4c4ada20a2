package agent

// The session harness of the tests: agenttest.Harness turned into Options
// and sessions started with Start.

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/agent/agenttest"
)

func TestMain(m *testing.M) {
	// The test binary is also the launcher of sandboxes in network mode
	// proxy: package launch (imported through agent/network.go) runs it.
	goleak.VerifyTestMain(m)
}

// harness is agenttest's fake model and directories, turned into this
// package's Options and sessions.
type harness struct{ *agenttest.Harness }

// opts returns Options for a new session on the fake model.
func (h *harness) opts() Options {
	return Options{
		Workdir:        h.Workdir,
		Home:           h.Home,
		Env:            h.Env(),
		SessionID:      uuid.NewString(),
		ControlTimeout: 20 * time.Second,
		CloseGrace:     20 * time.Second,
	}
}

// start starts a session and records its events; cleanup closes it and
// drains the events.
func (h *harness) start(opts Options) (*Session, *agenttest.Recorder) {
	h.TB.Helper()
	return agenttest.StartSession(h.TB, func(ctx context.Context, log *slog.Logger) (*Session, error) {
		return Start(ctx, opts, log)
	})
}
