//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// limitsProfile is the test's agent profile: Bash runs without a card, and
// small limits keep the attacks quick and safe on a small machine.
const limitsProfile = "    allowed_tools: [Bash]\n    resources: { memory: 1GiB, processes: 128, cpu: 1 }\n"

// forkBomb starts, detached, shells that each start eight more, three
// levels deep (585 processes without a cap), every leaf sleeping 20 s:
// bounded, so that a machine without the cap survives it too; the command
// returns after 3 s with the bomb still holding its processes. dash, not
// bash: bash retries a refused fork for seconds.
const forkBomb = `setsid sh -c 'b(){ if [ $1 -gt 0 ]; then i=0; while [ $i -lt 8 ]; do i=$((i+1)); b $(($1-1)) & done; wait; else sleep 20; fi; }; b 3' >/dev/null 2>&1 </dev/null & sleep 3; echo bomb-started`

// memoryHog tries to hold 20 GB: tail keeps a "line" without a newline in
// memory until it ends.
const memoryHog = `head -c 20G /dev/zero | tail; echo hog-exit-$?`

// cgroupEscape tries, from inside the sandbox, to move the agent into
// every cgroup it can see and to lift the caps of every pids and memory
// cgroup it can see; it prints how many of those writes worked.
const cgroupEscape = `ok=0; n=0; for f in $(find /sys/fs/cgroup -maxdepth 4 -name cgroup.procs -o -maxdepth 4 -name pids.max -o -maxdepth 4 -name memory.limit_in_bytes -o -maxdepth 4 -name memory.max); do n=$((n+1)); case $f in *procs) v=$$ ;; *limit_in_bytes) v=-1 ;; *) v=max ;; esac; (echo $v > $f) 2>/dev/null && ok=$((ok+1)); done; echo "escapes=$ok tried=$n"; echo alive-after-limits`

// limitHits returns the value of agentbridge_agent_limit_hits_total for
// the profile coder and limit, 0 when absent.
func limitHits(page, limit string) float64 {
	v, _ := strconv.ParseFloat(metricValue(page, `agentbridge_agent_limit_hits_total{limit="`+limit+`",profile="coder"}`), 64)
	return v
}

// TestE2EAgentResourceLimits (issue 20, attack 5): through the bridge
// binary and the real CLI, one conversation's agent runs a fork bomb and
// then a 20 GB allocation. The process cap refuses the bomb's forks, the
// memory cap kills the allocation, both are counted in /metrics, the
// memory kill is told in the conversation, and meanwhile a second
// conversation answers and the bridge keeps running. The agent's cgroups
// are gone after the bridge stopped.
func TestE2EAgentResourceLimits(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	e := startSlackBridgeWith(t, profileOptions{extra: limitsProfile})
	if v := sandbox.OpenCgroups(sandbox.CgroupName(t.TempDir()), nil); v.Version() == 0 {
		testkit.SkipOrFail(t, "no usable cgroup here (not root, no delegated cgroup)")
	} else {
		_ = v.Close()
	}
	if !strings.Contains(e.bridge.logs.String(), "agent resource limits enforced") {
		t.Fatalf("the bridge did not say the limits are enforced:\n%s", e.bridge.logs.String())
	}

	a := e.slack.Mention(slackChan, alice, "[bash "+forkBomb+"]", "")
	e.waitThreadText(t, a, "tool said: bomb-started")
	// The second conversation answers while the bomb holds its processes.
	start := time.Now()
	b := e.slack.Mention(slackChan, alice, "hello from the second conversation", "")
	e.waitThreadText(t, b, "pong: hello from the second conversation")
	t.Logf("second conversation answered in %v during the fork bomb", time.Since(start).Round(time.Millisecond))
	e.waitThreadText(t, a, "reached its limit of 128 processes")
	waitMetric(t, e, sandbox.LimitProcesses)

	e.slack.SendMessage(slackChan, alice, "[bash "+memoryHog+"]", a)
	e.waitThreadText(t, a, "memory limit")
	waitMetric(t, e, sandbox.LimitMemory)
	e.waitThreadText(t, a, "tool said: ") // the turn ends
	if out := toolResultWith(e.model, "hog-exit-"); out != "" && !strings.Contains(out, "hog-exit-137") {
		t.Errorf("the allocation was not killed: %q", out)
	}

	// Everyone still answers: the bridge, the second conversation, and
	// the first one's agent.
	start = time.Now()
	e.slack.SendMessage(slackChan, alice, "still there?", b)
	e.waitThreadText(t, b, "pong: still there?")
	t.Logf("second conversation answered in %v after the attacks", time.Since(start).Round(time.Millisecond))
	// The agent cannot move itself out of its cgroups nor raise its caps:
	// the sandbox shows /sys read-only and the agent has no capabilities.
	// (First the bomb's leaves end: while they hold the process cap the
	// attempt could not even start its find.)
	waitProcessesBelow(t, e.ab.dir, 64)
	e.slack.SendMessage(slackChan, alice, "[bash "+cgroupEscape+"]", a)
	e.waitThreadText(t, a, "tool said: escapes=")
	if out := toolResultWith(e.model, "alive-after-limits"); !strings.Contains(out, "escapes=0 tried=") || strings.Contains(out, "tried=0") {
		t.Errorf("cgroup escape attempts: %q", out)
	}
	if code, body := e.bridge.healthz(t); code != 200 || !strings.Contains(body.Limits["coder"], "memory 1 GiB, 128 processes, CPU 1 (cgroup v") {
		t.Errorf("/healthz: %d %+v", code, body)
	}
	e.slack.SendMessage(slackChan, alice, "!status", a)
	e.waitThreadText(t, a, "limits: memory 1 GiB, 128 processes, CPU 1 (cgroup v")

	// Stopping the bridge removes every agent cgroup it made.
	dirs := agentCgroupDirs(e.ab.dir)
	if len(dirs) == 0 {
		t.Fatalf("no agent cgroup of this bridge found while its agents run")
	}
	if err := e.bridge.stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left behind: %v", d, err)
		}
	}
}

// waitMetric waits until /metrics counts a hit of limit.
func waitMetric(t *testing.T, e *slackEnv, limit string) {
	t.Helper()
	testkit.WaitUntilSeen(t, "a "+limit+" limit hit counted in /metrics", e2eWait, func() (bool, string) {
		m := e.bridge.metricsOrEmpty()
		return limitHits(m, limit) > 0, "\n" + m
	})
	t.Logf("%s limit hits: %v", limit, limitHits(e.bridge.metricsOrEmpty(), limit))
}

// TestE2EAgentCgroupsAfterKill: a bridge killed with SIGKILL leaves its
// agents' cgroups behind (its processes die with it); the next start on
// the same data directory removes them.
func TestE2EAgentCgroupsAfterKill(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	e := startSlackBridgeWith(t, profileOptions{extra: limitsProfile})
	if !strings.Contains(e.bridge.logs.String(), "agent resource limits enforced") {
		testkit.SkipOrFail(t, "no usable cgroup here (not root, no delegated cgroup)")
	}
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	var agents []string
	for _, g := range agentCgroupDirs(e.ab.dir) {
		m, _ := filepath.Glob(filepath.Join(g, "agent-*"))
		agents = append(agents, m...)
	}
	if len(agents) == 0 {
		t.Fatal("no agent cgroup while an agent runs")
	}
	e.bridge.kill9()
	for _, d := range agents {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s: %v (expected left behind by SIGKILL)", d, err)
		}
	}
	e.ab.restart(t)
	e.ab.bridge.waitHealthy(t)
	for _, d := range agents {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("stale agent cgroup %s not removed at the next start: %v", d, err)
		}
	}
	if !strings.Contains(e.ab.bridge.logs.String(), "removed a stale agent cgroup of an earlier run") {
		t.Errorf("the restart did not say it removed stale cgroups")
	}
}

// waitProcessesBelow waits until every agent cgroup of the bridge on dir
// counts fewer than n tasks (pids.current), at most e2eWait.
func waitProcessesBelow(t *testing.T, dir string, n int) {
	t.Helper()
	testkit.WaitUntilSeen(t, fmt.Sprintf("every agent cgroup below %d tasks", n), e2eWait, func() (bool, string) {
		busiest := 0
		for _, g := range agentCgroupDirs(dir) {
			files, _ := filepath.Glob(filepath.Join(g, "agent-*", "pids.current"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					busiest = max(busiest, v)
				}
			}
		}
		return busiest < n, fmt.Sprintf("a cgroup with %d tasks", busiest)
	})
}
