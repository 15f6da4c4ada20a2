//go:build linux

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBenchFailover measures failover time with replicas: three replicas
// (lease 3 s), one conversation with history; each run stops the replica
// holding it — SIGKILL, or SIGTERM (hand-over) — sends the next message
// and times (a) until another replica holds the conversation and (b)
// until the answer with its history is posted; then a fresh replica
// replaces the stopped one. It runs only with BENCH_FAILOVER=1; BENCH_N
// (default 5) runs per way of stopping.
//
//	BENCH_FAILOVER=1 go test ./cmd/bridge -run TestBenchFailover -v
func TestBenchFailover(t *testing.T) {
	if os.Getenv("BENCH_FAILOVER") != "1" {
		t.Skip("BENCH_FAILOVER=1 runs the failover benchmark")
	}
	n := 5
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		n = v
	}
	const lease = 3 * time.Second
	e := startReplicas(t, 3, lease)
	ts := e.slack.Mention(slackChan, alice, "hello bench", "")
	e.waitAnswer(t, ts, "pong: hello bench")
	ways := map[string]func(*bridgeProc){
		"SIGKILL": func(p *bridgeProc) { p.kill9() },
		"SIGTERM": func(p *bridgeProc) { _ = p.cmd.Process.Signal(syscall.SIGTERM) },
	}
	answered := 0
	for _, way := range []string{"SIGKILL", "SIGTERM"} {
		var handover, answer []time.Duration
		for i := range n {
			victim, id, convs := -1, "", []string(nil)
			for j, p := range e.procs {
				if pid, held := e.held(t, p); len(held) > 0 {
					victim, id, convs = j, pid, held
				}
			}
			if victim < 0 {
				t.Fatal("no replica holds the conversation")
			}
			text := fmt.Sprintf("[echo-history] %s run %d", strings.ToLower(way), i)
			start := time.Now()
			ways[way](e.procs[victim])
			e.slack.SendMessage(slackChan, alice, text, ts)
			e.waitHandOver(t, id, convs, start.Add(time.Minute))
			handover = append(handover, time.Since(start))
			if err := e.slack.WaitFor(func() bool { return e.postsWith(ts, "history: hello bench", " · $") > answered }, 3*time.Minute); err != nil {
				t.Fatalf("no answer after the failover: %v", err)
			}
			answered++
			answer = append(answer, time.Since(start))
			old := e.procs[victim]
			<-old.done
			e.procs[victim] = startBridge(t, t.TempDir(), e.ab.cfg, e.ab.env...)
		}
		t.Logf("%s (lease %s, %d runs): taken over %s; answered with history %s", way, lease, n, statsMax(handover), statsMax(answer))
	}
}

// statsMax formats durations as p50 and max.
func statsMax(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("p50 %s, max %s", s[len(s)/2].Round(10*time.Millisecond), s[len(s)-1].Round(10*time.Millisecond))
}
