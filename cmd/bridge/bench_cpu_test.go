package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenchFollowUpCPU measures the bridge's own CPU per follow-up through
// the binary (BENCH_CPU=1; BENCH_N follow-ups, default 200): one Slack
// thread on the fake Slack with a live CLI, its follow-ups one after the
// other, user+sys of the bridge process over all of them divided by their
// number (the kernel counts in 10 ms ticks, so only the mean over many is
// meaningful); and each follow-up's own CPU from the threads' nanosecond
// run times (/proc/PID/task/*/schedstat), from its message to the next
// one's, as median and p90; and the idle bridge's CPU over 5 s before
// them (its tickers and timers), prorated over the follow-ups' time. The
// run is profiled (`bridge run -cpuprofile`) and the profile's top
// functions are printed (`go tool pprof -top`), with the profile's path
// when BENCH_CPU_PROFILE names one to keep it.
func TestBenchFollowUpCPU(t *testing.T) {
	const idleFor = 5 * time.Second
	if os.Getenv("BENCH_CPU") != "1" {
		t.Skip("BENCH_CPU=1 measures and profiles the bridge's CPU per follow-up")
	}
	n := 200
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		n = v
	}
	prof := os.Getenv("BENCH_CPU_PROFILE")
	if prof == "" {
		prof = filepath.Join(t.TempDir(), "bridge.cpu")
	} else if abs, err := filepath.Abs(prof); err == nil {
		prof = abs
	}
	profile := "    warm_spares: 0\n"
	if mode := os.Getenv("BENCH_NETWORK"); mode != "" { // host: without the egress gate
		profile += "    network: { mode: " + mode + " }\n"
	}
	b := startBenchBridgeWith(t, profile, 2, "-cpuprofile", prof)
	thread := b.slack.Mention(slackChan, alice, "first", "")
	b.waitThreadText(t, thread, "pong: first")
	for i := range warmUp {
		text := fmt.Sprintf("warm-up %d", i)
		b.slack.SendMessage(slackChan, alice, text, thread)
		b.waitThreadText(t, thread, "pong: "+text)
	}
	b.waitLedgerSettled(t)
	time.Sleep(time.Second) // the CLI's own after-turn work, and the bridge's
	pid := b.bridge.cmd.Process.Pid
	idle0 := procRunTime(t, pid)
	time.Sleep(idleFor) // what the bridge spends with no message at all
	idle := procRunTime(t, pid) - idle0
	cpu0 := procCPU(t, pid)
	start0 := time.Now()
	logs0 := strings.Count(b.bridge.logs.String(), "\n")
	var follow, each []time.Duration
	run := procRunTime(t, pid)
	helpers := bridgeChildren(pid) // the bridge binary's processes in the sandbox: none since the launcher
	helpers0 := helperRunTime(helpers)
	for i := range n {
		text := fmt.Sprintf("follow-up %d", i)
		start := time.Now()
		b.slack.SendMessage(slackChan, alice, text, thread)
		b.waitThreadText(t, thread, "pong: "+text)
		follow = append(follow, time.Since(start))
		if i > 0 { // from the previous follow-up's message to this one's reply
			now := procRunTime(t, pid)
			each, run = append(each, now-run), now
		}
	}
	time.Sleep(500 * time.Millisecond) // the last turn's bookkeeping after its reply
	cpu := procCPU(t, pid) - cpu0
	helperCPU := helperRunTime(helpers) - helpers0
	logLines := strings.Count(b.bridge.logs.String(), "\n") - logs0
	reqs := b.model.MessagesRequests()
	last := reqs[len(reqs)-1]
	idleShare := time.Duration(float64(idle) * float64(time.Since(start0)) / float64(idleFor) / float64(n))
	load, _ := os.ReadFile("/proc/loadavg")
	if err := b.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}
	fmt.Printf("\nbridge CPU per follow-up: %.2f ms (user+sys %v over %d follow-ups); each follow-up's %s; follow-up %s; idle bridge %v per %v (%.2f ms per follow-up of this run); load %s\n",
		float64(cpu.Microseconds())/1000/float64(n), cpu, n, cpuStats(each), stats(follow),
		idle.Round(time.Microsecond), idleFor, float64(idleShare.Microseconds())/1000, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("model requests: %d, the last %d KB; bridge log lines during the follow-ups: %d; the bridge binary's other processes in the sandbox (%d) %.2f ms per follow-up\n",
		len(reqs), len(last.Body)>>10, logLines, len(helpers), float64(helperCPU.Microseconds())/1000/float64(n))
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=35", bridgeBin, prof).CombinedOutput()
	if err != nil {
		t.Logf("go tool pprof: %v\n%s", err, out)
		return
	}
	fmt.Printf("profile %s:\n%s\n", prof, out)
}

// helperRunTime is the CPU time of processes pids so far (0 for one that
// has gone).
func helperRunTime(pids []int) time.Duration {
	var sum time.Duration
	for _, p := range pids {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p))
		for _, task := range tasks {
			raw, err := os.ReadFile(task)
			if f := strings.Fields(string(raw)); err == nil && len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += time.Duration(ns)
			}
		}
	}
	return sum
}

// procRunTime is the CPU time of all threads of process pid so far, in
// nanoseconds (the first field of /proc/PID/task/TID/schedstat; threads
// that ended are not counted, and the Go runtime rarely ends one).
func procRunTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		t.Skipf("no /proc/%d/task/*/schedstat: %v", pid, err)
	}
	var sum time.Duration
	for _, p := range tasks {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(raw)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// cpuStats formats CPU times as median, p90 and range in ms with n.
func cpuStats(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) }
	return fmt.Sprintf("CPU median %s ms (p90 %s, %s–%s, n=%d)", ms(s[len(s)/2]), ms(s[len(s)*9/10]), ms(s[0]), ms(s[len(s)-1]), len(s))
}
