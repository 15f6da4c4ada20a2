//go:build linux

package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSessionMemoryLimit: a session started with cgroups runs in its own
// cgroup with the memory cap; a command of the agent that outgrows it is
// killed and reported while the agent lives (LimitHit), the agent itself
// outgrowing it is an unexpected Exit with Limit "memory", and the cgroup
// is gone after the exit.
func TestSessionMemoryLimit(t *testing.T) {
	cg := sandbox.OpenCgroups(sandbox.CgroupName(t.TempDir()), testkit.Logger(t))
	if cg.Version() == 0 {
		testkit.SkipOrFail(t, "no usable cgroup here")
	}
	t.Cleanup(func() { _ = cg.Close() })
	cli := testkit.FakeCLI(t, `
head -c 2G /dev/zero | tail
sleep 3
exec tail /dev/zero
`)
	s, err := Start(context.Background(), Options{
		Command: cli, Workdir: t.TempDir(), Home: t.TempDir(),
		Cgroups: cg, Limits: sandbox.Limits{Memory: 256 << 20, Processes: 64},
	}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	dirs := s.limits.cg.Dirs()
	rec := agenttest.Record(t, s)
	t.Cleanup(func() { _ = s.Close(context.Background()); rec.WaitClosed(t) })

	hit := rec.Next(t, "a memory limit hit", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.LimitHit); return ok }).(streamjson.LimitHit)
	if hit.Limit != sandbox.LimitMemory || hit.Count != 1 || hit.AfterExit {
		t.Errorf("first hit %+v, want one memory kill while the agent runs", hit)
	}
	ex := agenttest.NextExit(t, rec)
	if ex.Expected || ex.Limit != sandbox.LimitMemory {
		t.Errorf("exit %+v, want an unexpected exit with Limit memory", ex)
	}
	var kills int64
	for _, ev := range rec.All() {
		if h, ok := ev.(streamjson.LimitHit); ok && h.Limit == sandbox.LimitMemory {
			kills += h.Count
		}
	}
	if kills != 2 {
		t.Errorf("memory kills reported: %d, want 2", kills)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("agent cgroup %s left after the exit: %v", d, err)
		}
	}
}

// TestSessionStartCPU: a session started with StartCPU runs in a cgroup
// with that CPU share, and with its Limits' share after UseFullCPU (a warm
// spare booting on leftover CPU, then taken by a conversation).
func TestSessionStartCPU(t *testing.T) {
	cg := sandbox.OpenCgroups(sandbox.CgroupName(t.TempDir()), testkit.Logger(t))
	if cg.Version() == 0 || !slices.Contains(cg.Enforcement(sandbox.Limits{CPU: 1}).Enforced, sandbox.LimitCPU) {
		testkit.SkipOrFail(t, "no cgroup with a CPU controller here")
	}
	t.Cleanup(func() { _ = cg.Close() })
	s, err := Start(context.Background(), Options{
		Command: testkit.FakeCLI(t, "exec cat >/dev/null"), Workdir: t.TempDir(), Home: t.TempDir(),
		Cgroups: cg, Limits: sandbox.Limits{CPU: 2}, StartCPU: 0.02,
	}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	t.Cleanup(func() { _ = s.Close(context.Background()); rec.WaitClosed(t) })
	share := func() string {
		t.Helper()
		for _, d := range s.limits.cg.Dirs() {
			for _, f := range []string{"cpu.weight", "cpu.shares"} {
				if b, err := os.ReadFile(filepath.Join(d, f)); err == nil {
					return strings.TrimSpace(string(b))
				}
			}
		}
		t.Fatal("no CPU share file in the agent's cgroup")
		return ""
	}
	want := map[int][2]string{1: {"20", "2048"}, 2: {"2", "200"}}[cg.Version()]
	if got := share(); got != want[0] {
		t.Errorf("CPU share at start %s, want %s (StartCPU 0.02)", got, want[0])
	}
	// Booting on leftover CPU, its control requests wait longer.
	if got, want := s.controlTimeout(), leftoverCPUWait*s.opts.ControlTimeout; got != want {
		t.Errorf("control timeout on leftover CPU %s, want %s", got, want)
	}
	if err := s.UseFullCPU(); err != nil {
		t.Fatal(err)
	}
	if got := share(); got != want[1] {
		t.Errorf("CPU share after UseFullCPU %s, want %s (Limits.CPU 2)", got, want[1])
	}
	if got := s.controlTimeout(); got != s.opts.ControlTimeout {
		t.Errorf("control timeout with the full share %s, want %s", got, s.opts.ControlTimeout)
	}
}

// TestLeftoverCPUBootWaitsLonger: a process booting on leftover CPU
// (StartCPU) whose answer to initialize comes after ControlTimeout — as
// on a saturated machine — is still initialized, not given up (busy CI:
// warm resumes failed at "initialize after 10s").
func TestLeftoverCPUBootWaitsLonger(t *testing.T) {
	cg := sandbox.OpenCgroups(sandbox.CgroupName(t.TempDir()), testkit.Logger(t))
	if cg.Version() == 0 || !slices.Contains(cg.Enforcement(sandbox.Limits{CPU: 1}).Enforced, sandbox.LimitCPU) {
		testkit.SkipOrFail(t, "no cgroup with a CPU controller here")
	}
	t.Cleanup(func() { _ = cg.Close() })
	const slowAnswer = `read -r line; sleep 3; ` +
		`printf '%s\n' '{"type":"control_response","response":{"subtype":"success","request_id":"host-1","response":{}}}'; exec cat >/dev/null`
	s, err := Start(context.Background(), Options{
		Command: testkit.FakeCLI(t, slowAnswer), Workdir: t.TempDir(), Home: t.TempDir(),
		Cgroups: cg, Limits: sandbox.Limits{CPU: 1}, StartCPU: 0.02, ControlTimeout: 2 * time.Second,
	}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	t.Cleanup(func() { _ = s.Close(context.Background()); rec.WaitClosed(t) })
	if err := s.Initialize(context.Background()); err != nil {
		t.Fatalf("initialize on leftover CPU, answered after 3 s with ControlTimeout 2 s: %v", err)
	}
}
