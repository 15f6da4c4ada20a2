//go:build linux

package pool

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSparesBootOnLeftoverCPU: where the profile has a CPU share, a spare
// boots with spareCPU of it, and the conversation that takes it, ready or
// still booting, runs with the profile's share.
func TestSparesBootOnLeftoverCPU(t *testing.T) {
	cg := cpuCgroups(t)
	withCPU := func(c *SpareConfig) { c.Options.Cgroups, c.Options.Limits = cg, sandbox.Limits{CPU: 1} }
	r, gate := newGatedSpareRig(t, 1, 4, withCPU)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()

	// Claimed while booting: the full share at once.
	done := r.acquireNewAsync(ctx, "claimed", r.newOpts())
	r.waitStatus(t, "the spare claimed", func(s SpareStatus) bool { return s.Starting == 0 })
	openGate(t, gate)
	g := <-done
	if g.err != nil {
		t.Fatal(g.err)
	}
	agenttest.Record(t, g.s)
	if got := g.s.CPUShare(); got != 1 {
		t.Errorf("a spare claimed while booting runs with CPU share %v, want the profile's 1", got)
	}

	// Ready, then taken.
	r.waitStatus(t, "a ready spare", ready(1))
	r.pool.mu.Lock()
	var spare float64
	for _, e := range r.pool.entries {
		if e.spare != nil && e.ready {
			spare = e.s.CPUShare()
		}
	}
	r.pool.mu.Unlock()
	if spare != spareCPU {
		t.Errorf("a ready spare has CPU share %v, want %v", spare, spareCPU)
	}
	s, err := r.pool.AcquireNew(ctx, "taken", r.cfg.Limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Record(t, s)
	if got := s.CPUShare(); got != 1 {
		t.Errorf("a spare taken runs with CPU share %v, want the profile's 1", got)
	}
}

// TestSpareReplacementAtOnceOnLeftoverCPU: where spares boot on leftover
// CPU, the replacement of a warm spare handed over is spawned at once, not
// after that session's first turn (which its boot cannot slow down), so
// the next new conversation finds a spare sooner.
func TestSpareReplacementAtOnceOnLeftoverCPU(t *testing.T) {
	cg := cpuCgroups(t)
	r := newSpareRig(t, 1, 4, nil)
	r.cfg.Options.Cgroups, r.cfg.Options.Limits = cg, sandbox.Limits{CPU: 1}
	r.cfg.RefillWait = time.Hour
	s, _ := r.takeSpare(t)
	r.waitStatus(t, "the replacement before any turn", ready(1))
	if n := len(r.spawnLog(t)); n != 2 {
		t.Errorf("%d spawns, want the spare and its replacement", n)
	}
	if s.FirstTurnDone() {
		t.Error("the conversation had a turn: the test proves nothing")
	}
}

// cpuCgroups opens cgroups with a CPU controller for the test (closed at
// its end); it skips without them, and fails under CI.
func cpuCgroups(t *testing.T) *sandbox.Cgroups {
	t.Helper()
	cg := sandbox.OpenCgroups(sandbox.CgroupName(t.TempDir()), testkit.Logger(t))
	if cg.Version() == 0 || !slices.Contains(cg.Enforcement(sandbox.Limits{CPU: 1}).Enforced, sandbox.LimitCPU) {
		testkit.SkipOrFail(t, "no cgroup with a CPU controller here")
	}
	t.Cleanup(func() { _ = cg.Close() })
	return cg
}
