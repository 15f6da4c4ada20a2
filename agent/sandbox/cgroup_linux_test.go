//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// needCgroups opens a bridge group of cgroups for the test and removes it
// afterwards. It skips where the process may not manage cgroups, except
// under CI (root on a cgroup v1 or v2 machine), where that fails.
func needCgroups(t *testing.T) *Cgroups {
	t.Helper()
	c := OpenCgroups(CgroupName(t.TempDir()), nil)
	if c.Version() == 0 {
		testkit.SkipOrFail(t, "no usable cgroup: %s", c.why)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

// TestCgroupPlacesBeforeExec: the command runs in the agent's cgroups from
// its first instruction (its /proc/self/cgroup names them), the limits are
// written, and Remove leaves nothing.
func TestCgroupPlacesBeforeExec(t *testing.T) {
	c := needCgroups(t)
	lim := Limits{Memory: 300 << 20, Processes: 32, CPU: 0.5}
	if e := c.Enforcement(lim); len(e.Missing) > 0 {
		t.Logf("not enforced here: %v (%s)", e.Missing, e.Why)
	}
	g, err := c.New(lim)
	if err != nil || g == nil {
		t.Fatalf("New: %v, %v", g, err)
	}
	cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
	done, err := g.Place(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	done()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, d := range g.Dirs() {
		if !strings.Contains(string(out), "/"+filepath.Base(filepath.Dir(d))+"/"+filepath.Base(d)+"\n") {
			t.Errorf("cat is not in %s:\n%s", d, out)
		}
	}
	if g.version == 1 {
		if got := strings.TrimSpace(readString(filepath.Join(g.memDir, "memory.limit_in_bytes"))); got != "314572800" {
			t.Errorf("memory.limit_in_bytes = %q", got)
		}
	} else if got := strings.TrimSpace(readString(filepath.Join(g.memDir, "memory.max"))); got != "314572800" {
		t.Errorf("memory.max = %q", got)
	}
	if got := strings.TrimSpace(readString(filepath.Join(g.pidsDir, "pids.max"))); got != "32" {
		t.Errorf("pids.max = %q", got)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists: %v", d, err)
		}
	}
}

// TestCgroupCapsForksAndMemory: a bounded fork bomb stops at the process
// cap and an allocation far above the memory cap is killed, both counted;
// Remove kills what still runs.
func TestCgroupCapsForksAndMemory(t *testing.T) {
	c := needCgroups(t)
	g, err := c.New(Limits{Memory: 256 << 20, Processes: 32})
	if err != nil || g == nil {
		t.Fatalf("New: %v, %v", g, err)
	}
	defer g.Remove()
	// 2^9 = 512 shells at most without the cap; each waits so they pile up.
	bomb := `b(){ if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & wait; else sleep 2; fi; }; b 9 2>/dev/null; echo done`
	cmd := exec.Command("/bin/sh", "-c", bomb)
	done, err := g.Place(cmd)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	done()
	t.Logf("bomb: %v in %v: %s", err, time.Since(start), out)
	if n := g.Counters().ForkRefusals; n == 0 {
		t.Errorf("no fork refused by the process cap")
	}
	hog := exec.Command("/bin/sh", "-c", `head -c 2G /dev/zero | tail; echo "tail exit $?"`)
	if done, err = g.Place(hog); err != nil {
		t.Fatal(err)
	}
	out, err = hog.CombinedOutput()
	done()
	t.Logf("hog: %v: %s", err, out)
	if !strings.Contains(string(out), "tail exit 137") {
		t.Errorf("the 2 GiB tail was not killed: %s", out)
	}
	if n := g.Counters().OOMKills; n != 1 {
		t.Errorf("OOM kills = %d, want 1", n)
	}
	// A straggler is killed by Remove.
	bg := exec.Command("/bin/sleep", "600")
	if done, err = g.Place(bg); err != nil {
		t.Fatal(err)
	}
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	done()
	waitJoined(t, g)
	waited := make(chan error, 1)
	go func() { waited <- bg.Wait() }()
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("straggler ended with %v, want killed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the straggler survived Remove")
	}
}

// waitJoined waits until a process is in each of g's cgroups (a placed
// command joins them right after it starts).
func waitJoined(t *testing.T, g *Cgroup) {
	t.Helper()
	for _, d := range g.Dirs() {
		testkit.WaitUntil(t, "a process in "+d, 5*time.Second, func() bool {
			return strings.TrimSpace(readString(filepath.Join(d, "cgroup.procs"))) != ""
		})
	}
}

// TestCgroupsClearStale: a second open with the same name removes agent
// cgroups (and kills their processes) that the first left.
func TestCgroupsClearStale(t *testing.T) {
	name := CgroupName(t.TempDir())
	c := OpenCgroups(name, nil)
	if c.Version() == 0 {
		testkit.SkipOrFail(t, "no usable cgroup: %s", c.why)
	}
	g, err := c.New(Limits{Memory: 256 << 20, Processes: 64})
	if err != nil {
		t.Fatal(err)
	}
	bg := exec.Command("/bin/sleep", "600")
	done, _ := g.Place(bg)
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	done()
	waitJoined(t, g)
	go bg.Wait()
	again := OpenCgroups(name, nil) // as a restarted bridge
	for _, d := range g.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("stale %s still exists: %v", d, err)
		}
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range again.dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("group %s still exists after Close: %v", d, err)
		}
	}
}

// TestNoCgroupDataLimit: without usable cgroups, a memory cap becomes each
// process's RLIMIT_DATA (at least MinDataLimit), which stops one huge
// allocation; the process and CPU limits are reported as not enforced.
func TestNoCgroupDataLimit(t *testing.T) {
	c := &Cgroups{why: "test: no cgroup"}
	l := Limits{Memory: 512 << 20, Processes: 64, CPU: 1}
	e := c.Enforcement(l)
	want := "⚠️ not enforced: memory 512 MiB, 64 processes, CPU 1 (test: no cgroup); only 1 GiB of data per process (RLIMIT_DATA)"
	if got := e.Summary(l); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	g, err := c.New(l)
	if err != nil || g == nil || len(g.Dirs()) != 0 {
		t.Fatalf("New = %+v, %v", g, err)
	}
	cmd := exec.Command("/bin/sh", "-c", `ulimit -d; head -c 20G /dev/zero | tail; echo "tail exit $?"`)
	done, err := g.Place(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	done()
	if err != nil || !strings.HasPrefix(string(out), "1048576\n") || !strings.Contains(string(out), "tail exit 1") {
		t.Errorf("got %v: %s", err, out)
	}
	if g, _ := c.New(Limits{Processes: 64}); g != nil {
		t.Errorf("a Cgroup without a memory cap to give: %+v", g)
	}
}
