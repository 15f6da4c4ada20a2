//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestE2EAgentSeesOnlyItsOwnCgroup (issue 36, attack 6): through the bridge
// binary and the real CLI, with two conversations' agents running, a
// command of the second one's agent reads the first one's cgroup figures
// (memory, processes, CPU) by their host paths and searches
// /sys/fs/cgroup for any agent's: it reads none and finds only its own
// figures, while its own memory limit stays readable where its cgroup
// namespace roots it (the CLI may read it).
func TestE2EAgentSeesOnlyItsOwnCgroup(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	e := startSlackBridgeWith(t, profileOptions{extra: limitsProfile})
	if !strings.Contains(e.bridge.logs.String(), "agent resource limits enforced") {
		testkit.SkipOrFail(t, "no usable cgroup here (not root, no delegated cgroup)")
	}
	first := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, first, "pong: hello")
	var figures []string // the first agent's (and any spare's) figures, by host path
	for _, g := range agentCgroupDirs(e.ab.dir) {
		for _, name := range []string{"memory.usage_in_bytes", "memory.current", "pids.current", "cpu.stat", "cpuacct.usage"} {
			m, _ := filepath.Glob(filepath.Join(g, "agent-*", name))
			figures = append(figures, m...)
		}
	}
	if len(figures) < 2 {
		t.Fatalf("the first agent's cgroup figures are not on the host to test with: %v", figures)
	}
	probe := "r=0; for f in " + strings.Join(figures, " ") + "; do cat $f >/dev/null 2>&1 && r=$((r+1)); done; " +
		"echo sibling_read=$r agents_found=$(find /sys/fs/cgroup -name 'agent-*' 2>/dev/null | wc -l) " +
		"figures_seen=$(find /sys/fs/cgroup -name pids.current 2>/dev/null | wc -l) " +
		"own_limit=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null | head -n 1) cgroup-probe-done"
	second := e.slack.Mention(slackChan, alice, "[bash "+probe+"]", "")
	e.waitThreadText(t, second, "tool said: sibling_read=")
	out := toolResultWith(e.model, "cgroup-probe-done")
	t.Logf("probe: %s", out)
	for _, want := range []string{"sibling_read=0 ", "agents_found=0 ", "figures_seen=1 ", "own_limit=1073741824 "} {
		if !strings.Contains(out, want) {
			t.Errorf("the second agent's view of the cgroups lacks %q: %q", want, out)
		}
	}
}
