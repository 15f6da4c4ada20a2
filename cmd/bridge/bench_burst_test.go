package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBenchBurst measures a burst of new threads through the binary
// (BENCH_BURST=1): BENCH_N threads (default 20) mentioned at once on a
// bridge with the shipped spare default (warm_spares: 1, ready before the
// burst) and max_live BENCH_MAX_LIVE (default 8), with the real CLI in its
// sandbox behind the egress gate. It prints each thread's first reply
// (median, p90, the last), the bridge's peak RSS during the burst (the
// bridge process alone, and the other processes of the bridge binary
// beside it: sandbox launchers caught before their exec) and the bridge's
// CPU. It fails when a thread is not
// answered within e2eWait.
func TestBenchBurst(t *testing.T) {
	if os.Getenv("BENCH_BURST") != "1" {
		t.Skip("BENCH_BURST=1 measures a burst of new threads at once")
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		n = v
	}
	maxLive := 8
	if v, err := strconv.Atoi(os.Getenv("BENCH_MAX_LIVE")); err == nil && v > 0 {
		maxLive = v
	}
	spares := cmp.Or(os.Getenv("BENCH_SPARES"), "1")
	b := startBenchBridgeWith(t, "    warm_spares: "+spares+"\n", maxLive)
	b.waitSpareReady(t)
	time.Sleep(spareSettle)
	pid := b.bridge.cmd.Process.Pid

	var mu sync.Mutex
	var peak, peakForwarders int64
	var atPeak string // the bridge's memory lines at its peak
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the bridge's RSS every 20 ms until the last answer
		defer close(sampled)
		for {
			rss := procRSS(t, pid)
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			var fw int64
			for _, c := range bridgeChildren(pid) {
				fw += procRSSOr0(c)
			}
			mu.Lock()
			if rss > peak {
				atPeak = memLines(string(status))
			}
			peak, peakForwarders = max(peak, rss), max(peakForwarders, fw)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	cpu0 := procCPU(t, pid)
	start := time.Now()
	threads := make([]string, n)
	for i := range n {
		threads[i] = b.slack.Mention(slackChan, alice, fmt.Sprintf("burst %d", i), "")
	}
	answered := make([]time.Duration, n)
	left := n
	if err := b.slack.WaitFor(func() bool {
		for i, th := range threads {
			if answered[i] > 0 {
				continue
			}
			for _, p := range b.slack.Posts() {
				if cur, ok := b.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == th && strings.Contains(b.text(cur), fmt.Sprintf("pong: burst %d", i)) {
					answered[i], left = time.Since(start), left-1
					break
				}
			}
		}
		return left == 0
	}, e2eWait+time.Duration(n)*2*time.Second); err != nil {
		t.Fatalf("%d of %d burst threads unanswered after %v: %v", left, n, time.Since(start).Round(time.Millisecond), err)
	}
	cpu := procCPU(t, pid) - cpu0
	metrics := b.bridge.metricsOrEmpty()
	var goMem []string
	for _, m := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_sys_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes", "go_goroutines"} {
		goMem = append(goMem, m+" "+metricValue(metrics, m))
	}
	close(stop)
	<-sampled
	load, _ := os.ReadFile("/proc/loadavg")
	sorted := slices.Clone(answered)
	slices.Sort(sorted)
	if os.Getenv("BENCH_SMAPS") == "1" {
		for _, p := range append([]int{pid}, bridgeChildren(pid)[:1]...) {
			raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", p))
			fmt.Printf("smaps of %d:\n%s\n", p, smapsByFile(string(raw)))
		}
	}
	if err := b.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}
	fmt.Printf("\n%d new threads at once (warm_spares: %s, max_live: %d): first reply %s, the last %v; bridge RSS peak %.1f MB (launchers caught before their exec %.1f MB); bridge CPU %v; load %s\nat the peak: %s\nafter the burst: %s\n",
		n, spares, maxLive, stats(answered), sorted[n-1].Round(time.Millisecond), float64(peak)/(1<<20), float64(peakForwarders)/(1<<20),
		cpu, strings.Join(strings.Fields(string(load))[:3], " "), atPeak, strings.Join(goMem, ", "))
}

// bridgeChildren lists the processes below pid (at any depth) that run the
// bridge binary itself: sandbox launchers not yet replaced by the CLI (and,
// before the launcher, the per-agent egress forwarders).
func bridgeChildren(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	comm := map[int]string{}
	for _, p := range stats {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		open, closing := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
		if open < 0 || closing < open {
			continue
		}
		id, _ := strconv.Atoi(strings.TrimSpace(string(raw[:open])))
		f := strings.Fields(string(raw[closing+2:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[id], comm[id] = pp, string(raw[open+1:closing])
	}
	var out []int
	for id, c := range comm {
		if id == pid || c != filepath.Base(bridgeBin) {
			continue
		}
		for p := parent[id]; p > 1; p = parent[p] {
			if p == pid {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// procRSSOr0 is the resident set size of process pid in bytes, 0 when it
// has gone.
func procRSSOr0(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// memLines picks the resident-memory lines of a /proc/PID/status text.
func memLines(status string) string {
	var out []string
	for line := range strings.SplitSeq(status, "\n") {
		if strings.HasPrefix(line, "Rss") || strings.HasPrefix(line, "VmHWM") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, ", ")
}

// smapsByFile sums a /proc/PID/smaps text's Rss by mapped file.
func smapsByFile(smaps string) string {
	sum := map[string]int{}
	name := ""
	for line := range strings.SplitSeq(smaps, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			name = "[anon]"
			if len(f) >= 6 {
				name = f[5] + " " + f[1]
			}
		case len(f) == 3 && f[0] == "Rss:":
			kb, _ := strconv.Atoi(f[1])
			sum[name] += kb
		}
	}
	var out []string
	for k, v := range sum {
		if v > 0 {
			out = append(out, fmt.Sprintf("%8d kB %s", v, k))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
