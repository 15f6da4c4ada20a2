package platformtest

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestWaitStates: the wait returns the states once n were reported; too
// few fail it, naming those seen.
func TestWaitStates(t *testing.T) {
	var r StateRecorder
	go func() {
		r.ReportState(bridges.BotState{State: bridges.ConnStarting})
		r.ReportState(bridges.BotState{State: bridges.ConnConnected})
	}()
	if got := r.WaitStates(t, 2, 5*time.Second); len(got) != 2 || got[1].State != bridges.ConnConnected {
		t.Errorf("states %+v", got)
	}
	fs := testkit.RunTB(func(tb *testkit.FakeTB) { r.WaitStates(tb, 3, 20*time.Millisecond) }).Failures()
	if len(fs) != 1 || !strings.Contains(fs[0], "3 connection states") || !strings.Contains(fs[0], string(bridges.ConnConnected)) {
		t.Errorf("failures %q", fs)
	}
}
