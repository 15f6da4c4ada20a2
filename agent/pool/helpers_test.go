package pool

// The session harness of the tests: the fake model and agent.Start here, the
// rest from agent/agenttest and internal/testkit.

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestMain(m *testing.M) {
	// The test binary is also the launcher of sandboxes in network mode
	// proxy: package launch (imported through agent/network.go) runs it.
	goleak.VerifyTestMain(m)
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
	testkit.RequireClaude(t)
	return &harness{t: t, srv: fakemodel.New(t), home: t.TempDir(), wd: t.TempDir()}
}

// opts returns Options for a new session on the fake model.
func (h *harness) opts() agent.Options {
	return agent.Options{
		Workdir:        h.wd,
		Home:           h.home,
		Env:            agenttest.EnvFrom(h.srv.Env()),
		SessionID:      uuid.NewString(),
		ControlTimeout: 20 * time.Second,
		CloseGrace:     20 * time.Second,
	}
}

// start starts a session and records its events; cleanup closes it and
// drains the events.
func (h *harness) start(opts agent.Options) (*agent.Session, *agenttest.Recorder) {
	h.t.Helper()
	s, err := agent.Start(context.Background(), opts, testkit.Logger(h.t))
	if err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	rec := agenttest.Record(h.t, s)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Close(ctx)
		rec.WaitClosed(h.t)
	})
	return s, rec
}
