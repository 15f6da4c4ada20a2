package pool

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
)

// TestPoolSnapshot: a live session is listed with its key, profile, pid,
// session id and times; a removed one is not.
func TestPoolSnapshot(t *testing.T) {
	ph := newPoolHarness(t)
	before := time.Now()
	s, r := ph.mustAcquire(t, "conv-1", Limit{Profile: "coder", MaxLive: 2})
	agenttest.Send(t, s, "hello")
	agenttest.NextResult(t, r)

	snap := ph.pool.Snapshot()
	if len(snap) != 1 {
		t.Fatalf("snapshot %+v, want one session", snap)
	}
	got := snap[0]
	if got.Key != "conv-1" || got.Profile != "coder" || got.PID != s.PID() || got.SessionID != s.SessionID() {
		t.Errorf("snapshot %+v does not describe the session (pid %d, id %s)", got, s.PID(), s.SessionID())
	}
	if got.Started.Before(before) || got.LastActive.Before(got.Started) {
		t.Errorf("started %v, last active %v, test began %v", got.Started, got.LastActive, before)
	}
	rss, err := agent.TreeRSS(got.PID)
	if err != nil || rss < 1<<20 {
		t.Errorf("TreeRSS(agent) = %d, %v; want at least 1 MiB", rss, err)
	}

	if err := ph.pool.Remove(t.Context(), "conv-1"); err != nil {
		t.Fatal(err)
	}
	if snap := ph.pool.Snapshot(); len(snap) != 0 {
		t.Errorf("snapshot after Remove: %+v", snap)
	}
}
