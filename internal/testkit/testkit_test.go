package testkit

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestWaitUntil: a condition that becomes true ends the wait; one that
// never does fails the test after the timeout, naming what it waited for.
func TestWaitUntil(t *testing.T) {
	start := time.Now()
	calls := 0
	WaitUntil(t, "the third call", time.Second, func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("calls = %d, want 3", calls)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("waited %s for a condition true on the third poll", d)
	}
	tb := RunTB(func(tb *FakeTB) { WaitUntil(tb, "never", 50*time.Millisecond, func() bool { return false }) })
	if tb.Failure() != "timed out after 50ms waiting for never" {
		t.Errorf("failure = %q", tb.Failure())
	}
}

// TestWaitUntilSeen: a timed-out wait names what the last poll saw.
func TestWaitUntilSeen(t *testing.T) {
	polls := 0
	tb := RunTB(func(tb *FakeTB) {
		WaitUntilSeen(tb, "two calls", 30*time.Millisecond, func() (bool, string) {
			polls++
			return false, fmt.Sprintf("%d polls", polls)
		})
	})
	if want := fmt.Sprintf("timed out after 30ms waiting for two calls; saw: %d polls", polls); tb.Failure() != want {
		t.Errorf("failure = %q, want %q", tb.Failure(), want)
	}
	n := 0
	WaitUntilSeen(t, "the second poll", time.Second, func() (bool, string) { n++; return n == 2, "" })
	if n != 2 {
		t.Errorf("polls = %d, want 2", n)
	}
}

// TestNeedToolCIRule: a missing tool skips the test, except under CI
// where it fails it.
func TestNeedToolCIRule(t *testing.T) {
	t.Setenv("CI", "")
	if tb := RunTB(func(tb *FakeTB) { NeedTool(tb, "no-such-tool-xyz", "nowhere") }); !tb.Skipped() {
		t.Errorf("without CI: skipped=%v msg=%q, want a skip", tb.Skipped(), tb.Failure())
	}
	t.Setenv("CI", "true")
	if tb := RunTB(func(tb *FakeTB) { NeedTool(tb, "no-such-tool-xyz", "nowhere") }); tb.Skipped() || tb.Failure() == "" {
		t.Errorf("under CI: skipped=%v msg=%q, want a failure", tb.Skipped(), tb.Failure())
	}
	if p := NeedTool(t, "sh", "base system"); p == "" {
		t.Error("NeedTool(sh) returned no path")
	}
}

// TestCounterValue sums the samples that carry every wanted label.
func TestCounterValue(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total"}, []string{"bot", "outcome"})
	reg.MustRegister(c)
	c.WithLabelValues("a", "ok").Add(2)
	c.WithLabelValues("b", "ok").Add(3)
	c.WithLabelValues("a", "refused").Add(5)
	for _, tc := range []struct {
		labels map[string]string
		want   float64
	}{
		{nil, 10},
		{map[string]string{"outcome": "ok"}, 5},
		{map[string]string{"bot": "a", "outcome": "ok"}, 2},
		{map[string]string{"bot": "c"}, 0},
	} {
		if got := CounterValue(t, reg, "x_total", tc.labels); got != tc.want {
			t.Errorf("CounterValue(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

// TestSyncBuffer: concurrent writes all land.
func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { fmt.Fprint(&b, "x") })
	}
	wg.Wait()
	if got := b.String(); got != "xxxxxxxxxx" {
		t.Errorf("buffer = %q", got)
	}
}

// TestLogRecorder: Next returns the records in order and fails when none
// comes; Has finds a record by level and message; the hook sees each.
func TestLogRecorder(t *testing.T) {
	h := &LogRecorder{}
	var hooked []string
	h.SetOnRecord(func(r slog.Record) { hooked = append(hooked, r.Message) })
	log := slog.New(h)
	log.Info("first")
	go log.Error("second", "k", "v")
	if r := h.Next(t, time.Second); r.Message != "first" {
		t.Errorf("Next = %q, want first", r.Message)
	}
	if r := h.Next(t, time.Second); r.Message != "second" || r.Level != slog.LevelError {
		t.Errorf("Next = %q at %v, want second at ERROR", r.Message, r.Level)
	}
	if !h.Has(slog.LevelError, "seco") || h.Has(slog.LevelInfo, "second") {
		t.Error("Has does not match by level and message part")
	}
	tb := RunTB(func(tb *FakeTB) { h.Next(tb, 20*time.Millisecond) })
	if tb.Failure() != "no log record within 20ms" {
		t.Errorf("Next without a record: %q", tb.Failure())
	}
	if len(hooked) != 2 {
		t.Errorf("hook saw %v", hooked)
	}
}

// TestFakeTB: Errorf goes on, Fatalf stops the helper, Skipf stops it as
// a skip, and cleanups run after it, the last first.
func TestFakeTB(t *testing.T) {
	var order []string
	tb := RunTB(func(tb *FakeTB) {
		tb.Cleanup(func() { order = append(order, "first") })
		tb.Cleanup(func() { order = append(order, "second") })
		tb.Errorf("soft %d", 1)
		tb.Fatalf("hard %d", 2)
		tb.Errorf("never")
	})
	if fs := tb.Failures(); fmt.Sprint(fs) != "[soft 1 hard 2]" || tb.Skipped() {
		t.Errorf("failures %q, skipped %v", fs, tb.Skipped())
	}
	if fmt.Sprint(order) != "[second first]" {
		t.Errorf("cleanups ran %v", order)
	}
	tb = RunTB(func(tb *FakeTB) { tb.Skipf("no %s", "tool"); tb.Errorf("never") })
	if !tb.Skipped() || tb.Failure() != "" {
		t.Errorf("after Skipf: skipped %v, failures %q", tb.Skipped(), tb.Failures())
	}
}
