package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestBenchResume prints the resume rows of the benchmark table
// (BENCH_RESUME=1; BENCH_N conversations, default 10), each against the
// median follow-up of the same bridge:
//
//   - resume after restart: BENCH_N threads answered once, the bridge
//     stopped and started again; once it has resumed them ahead of their
//     return (warm resume), a message in each thread, one after the other;
//   - resume after eviction: three threads on max_live: 2, a message to
//     each in turn (2.1 s apart, so the least recently used is idle long
//     enough to be evicted): each finds its agent evicted, evicts another
//     and resumes cold.
func TestBenchResume(t *testing.T) {
	if os.Getenv("BENCH_RESUME") != "1" {
		t.Skip("BENCH_RESUME=1 runs the resume rows of the benchmark table")
	}
	n := 10
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		n = v
	}
	fmt.Printf("\n| measure | result | how |\n| --- | --- | --- |\n")
	for _, r := range benchResume(t, n) {
		fmt.Printf("| %s | %s | %s |\n", r[0], r[1], r[2])
	}
}

// benchResume returns the rows of TestBenchResume (measure, result, how)
// for n conversations.
func benchResume(t *testing.T, n int) [][3]string {
	t.Helper()
	var rows [][3]string
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}

	// After a restart.
	b := startBenchBridgeWith(t, "    warm_spares: 0\n", n+1)
	threads := make([]string, n)
	for i := range n {
		text := fmt.Sprintf("thread %d", i)
		threads[i] = b.slack.Mention(slackChan, alice, text, "")
		b.waitThreadText(t, threads[i], "pong: "+text)
	}
	follow := benchFollowUps(t, b, threads[0], n)
	b.waitLedgerSettled(t)
	time.Sleep(time.Second) // the last message's "completed" after its result, or the restart re-delivers it
	if err := b.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}
	restarted := time.Now()
	b.ab.restart(t)
	b.bridge = b.ab.bridge
	testkit.WaitUntilSeen(t, fmt.Sprintf("%d conversations resumed ahead", n), 5*time.Minute, func() (bool, string) {
		got := strings.Count(b.bridge.logs.String(), "conversation resumed ahead of its return")
		return got >= n, fmt.Sprintf("%d resumed", got)
	})
	ready := time.Since(restarted)
	time.Sleep(spareSettle)
	var back []time.Duration
	for i, th := range threads {
		text := fmt.Sprintf("back %d", i)
		start := time.Now()
		b.slack.SendMessage(slackChan, alice, text, th)
		b.waitThreadText(t, th, "pong: "+text)
		back = append(back, time.Since(start))
	}
	taken := strings.Count(b.bridge.logs.String(), "resumed conversation taken warm")
	fm := median(follow)
	vs := func(ds []time.Duration) string {
		s := slices.Sorted(slices.Values(ds))
		p90 := s[len(s)*9/10] // as stats reports it
		return fmt.Sprintf("p50 %.1f×, p90 %.1f× the follow-up median", float64(median(ds))/float64(fm), float64(p90)/float64(fm))
	}
	rows = append(rows,
		[3]string{"follow-up (restart bridge)", stats(follow), fmt.Sprintf("%d follow-ups in one thread before the restart; load %s", n, load())},
		[3]string{"resume after restart", stats(back), fmt.Sprintf("%s; %d threads, one message each after the restart, %d taken warm; all resumed ahead %.1f s after the start; load %s",
			vs(back), n, taken, ready.Seconds(), load())})
	if err := b.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}

	// After eviction.
	e := startBenchBridgeWith(t, "    warm_spares: 0\n", 2)
	ev := make([]string, 3)
	for i := range ev {
		text := fmt.Sprintf("evict %d", i)
		ev[i] = e.slack.Mention(slackChan, alice, text, "")
		e.waitThreadText(t, ev[i], "pong: "+text)
		time.Sleep(2100 * time.Millisecond)
	}
	efollow := benchFollowUps(t, e, ev[2], n)
	var evicted []time.Duration
	for i := range n {
		time.Sleep(2100 * time.Millisecond) // the least recently used agent may be evicted
		th := ev[i%3]                       // the one evicted longest ago
		text := fmt.Sprintf("again %d", i)
		start := time.Now()
		e.slack.SendMessage(slackChan, alice, text, th)
		e.waitThreadText(t, th, "pong: "+text)
		evicted = append(evicted, time.Since(start))
	}
	fm = median(efollow)
	t.Logf("evicted %v", evicted)
	if err := e.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}
	return append(rows,
		[3]string{"follow-up (max_live 2 bridge)", stats(efollow), fmt.Sprintf("%d follow-ups; load %s", n, load())},
		[3]string{"resume after eviction", stats(evicted), fmt.Sprintf("%s; 3 threads on max_live: 2, each message evicts the least recently used agent and resumes its own cold; load %s",
			vs(evicted), load())})
}

// benchFollowUps times n follow-ups in thread (after warmUp untimed ones).
func benchFollowUps(t *testing.T, b *benchBridge, thread string, n int) []time.Duration {
	t.Helper()
	for i := range warmUp {
		text := fmt.Sprintf("warm-up %d", i)
		b.slack.SendMessage(slackChan, alice, text, thread)
		b.waitThreadText(t, thread, "pong: "+text)
	}
	var follow []time.Duration
	for i := range n {
		text := fmt.Sprintf("follow-up %d", i)
		start := time.Now()
		b.slack.SendMessage(slackChan, alice, text, thread)
		b.waitThreadText(t, thread, "pong: "+text)
		follow = append(follow, time.Since(start))
	}
	return follow
}
