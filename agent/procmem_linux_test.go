package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestTreeRSS counts the children of a process too, and refuses a pid
// that does not exist.
func TestTreeRSS(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	testkit.WaitUntil(t, "both sleeps started", 10*time.Second, func() bool { return len(childrenOf(pid)) == 2 })

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
