package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestPoolSnapshot: a live session is listed with its key, profile, pid,
// session id and times; a removed one is not.
func TestPoolSnapshot(t *testing.T) {
	ph := newPoolHarness(t)
	before := time.Now()
	s, r := ph.mustAcquire(t, "conv-1", PoolLimit{Profile: "coder", MaxLive: 2})
	send(t, s, "hello")
	nextResult(t, r)

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
	rss, err := TreeRSS(got.PID)
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

// TestTreeRSS counts the children of a process too, and refuses a pid
// that does not exist.
func TestTreeRSS(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	waitUntil(t, "both sleeps started", 10*time.Second, func() bool { return len(childrenOf(pid)) == 2 })

	_, _, shellPages, ok := readStat("/proc/" + strconv.Itoa(pid) + "/stat")
	if !ok || shellPages <= 0 {
		t.Fatalf("readStat(shell) = %d pages, ok %v", shellPages, ok)
	}
	tree, err := TreeRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	if shell := shellPages * int64(os.Getpagesize()); tree <= shell {
		t.Errorf("TreeRSS = %d bytes, not more than the shell alone (%d): children not counted", tree, shell)
	}
	if _, err := TreeRSS(1 << 30); err == nil {
		t.Error("TreeRSS of a missing pid: no error")
	}
}

// childrenOf lists the pids whose parent is pid.
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		if p, parent, _, ok := readStat(f); ok && parent == pid {
			out = append(out, p)
		}
	}
	return out
}
