package main

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// arrivalGap is the gap between new threads in the "arriving apart" rows:
// BENCH_GAP (a duration), 2 s by default.
func arrivalGap() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("BENCH_GAP")); err == nil && d > 0 {
		return d
	}
	return 2 * time.Second
}

// benchArrivals measures first replies of new threads on a bridge with
// the spare settings spares (warm_spares: auto in make bench; with a fixed
// count, all of them ready before each kind): n threads back to back (each
// mentioned right after the previous one's reply) and n arriving arrivalGap apart, against the
// median follow-up measured on the same bridge afterwards and the cold
// starts cold of the same run (nil: not compared). It returns the table
// rows (measure, result, how).
func benchArrivals(t *testing.T, n int, spares string, cold []time.Duration) [][3]string {
	t.Helper()
	b := startBenchBridgeWith(t, "    warm_spares: "+spares+"\n", 2*n+8)
	fixed, _ := strconv.Atoi(spares) // a fixed count: all of them ready first
	b.waitSparesReady(t, max(fixed, 1))
	time.Sleep(spareSettle)
	var toModel []time.Duration // of the apart row: mention → the model request
	first := func(text string) (string, time.Duration) {
		start := time.Now()
		thread := b.slack.Mention(slackChan, alice, text, "")
		b.waitThreadText(t, thread, "pong: "+text)
		if at := modelRequestAt(b, text, start); !at.IsZero() && strings.HasPrefix(text, "apart") {
			toModel = append(toModel, at.Sub(start))
		}
		return thread, time.Since(start)
	}
	var b2b, apart []time.Duration
	var thread string
	backToBack := n
	if os.Getenv("BENCH_B2B") == "0" { // only the apart row: one thread for the follow-ups
		backToBack = 0
		thread, _ = first("follow-ups")
	}
	for i := range backToBack {
		var d time.Duration
		thread, d = first(fmt.Sprintf("back to back %d", i))
		b2b = append(b2b, d)
		t.Logf("b2b %d %v", i, d)
	}
	b.waitSparesReady(t, max(fixed, 1))
	t0 := time.Now()
	for i := range n {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * arrivalGap())))
		_, d := first(fmt.Sprintf("apart %d", i))
		apart = append(apart, d)
		t.Logf("apart %d %v", i, d)
	}
	// Follow-ups in the last back-to-back thread, its agent warmed up.
	follow := benchFollowUps(t, b, thread, n)
	target := metricValue(b.bridge.metricsOrEmpty(), `agentbridge_warm_spares{profile="coder",state="target"}`)
	if err := b.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge with warm_spares: %s: %v", spares, err)
	}
	fm := median(follow)
	vs := func(ds []time.Duration) string {
		s := fmt.Sprintf("p50 %.1f×, p90 %.1f× the follow-up median", float64(median(ds))/float64(fm), float64(pct(ds, 90))/float64(fm))
		if len(cold) > 0 {
			slow := 0
			for _, d := range ds {
				if d > slices.Max(cold) {
					slow++
				}
			}
			s += fmt.Sprintf("; %d slower than the slowest cold start", slow)
		}
		return s
	}
	var rows [][3]string
	if backToBack > 0 {
		rows = append(rows, [3]string{fmt.Sprintf("first reply, %d new threads back to back (warm_spares: %s)", n, spares), stats(b2b), vs(b2b)})
	}
	rows = append(rows,
		[3]string{fmt.Sprintf("first reply, %d new threads %v apart (warm_spares: %s)", n, arrivalGap(), spares), stats(apart), vs(apart)},
		[3]string{"— of which mention → the model request", stats(toModel), "the fake Slack's event, the bridge, the CLI up to its request; the rest is the model's answer, the CLI and the post"},
		[3]string{fmt.Sprintf("follow-up on the warm_spares: %s bridge", spares), stats(follow), fmt.Sprintf("message → reply posted, %d follow-ups after the arrivals; spare target at the end %s", n, target)})
	return rows
}

// TestBenchArrivals prints the rows of benchArrivals alone (BENCH_ARRIVALS=1;
// BENCH_N threads of each kind, default 20): new threads back to back and
// arrivalGap apart on warm_spares: auto (or each of the space-separated values of
// BENCH_SPARES, e.g. "1 auto", one bridge after the other; BENCH_B2B=0 leaves
// out the back-to-back row), against the follow-up median and the
// cold starts of the same run.
func TestBenchArrivals(t *testing.T) {
	if os.Getenv("BENCH_ARRIVALS") != "1" {
		t.Skip("BENCH_ARRIVALS=1 runs the arrival rows of the benchmark table alone")
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		n = v
	}
	c := startBenchBridge(t, 0, 3)
	var cold []time.Duration
	for i := range 3 {
		text := fmt.Sprintf("cold %d", i)
		start := time.Now()
		thread := c.slack.Mention(slackChan, alice, text, "")
		c.waitThreadText(t, thread, "pong: "+text)
		cold = append(cold, time.Since(start))
	}
	if err := c.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge without spares: %v", err)
	}
	fmt.Printf("\n| measure | result | how |\n| --- | --- | --- |\n| cold start through the bridge | %s | warm_spares: 0 |\n", stats(cold))
	for _, spares := range strings.Fields(cmp.Or(os.Getenv("BENCH_SPARES"), "auto")) {
		for _, r := range benchArrivals(t, n, spares, cold) {
			fmt.Printf("| %s | %s | %s |\n", r[0], r[1], r[2])
		}
	}
}

// modelRequestAt is when the fake model got the first request after start
// that carries text as a whole word (zero if none).
func modelRequestAt(b *benchBridge, text string, start time.Time) time.Time {
	re := regexp.MustCompile(regexp.QuoteMeta(text) + `\b`)
	for _, r := range b.model.MessagesRequests() {
		if !r.Time.Before(start) && re.Match(r.Body) {
			return r.Time
		}
	}
	return time.Time{}
}
