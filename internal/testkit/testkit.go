// Package testkit is the one test kit every package of the module can
// import: waiting on a condition with a bound, the tools a test needs
// (the Claude Code CLI, bwrap, any program on PATH) with the CI rule
// (skip on a laptop, fail when CI is set), a goroutine-safe buffer, a
// logger into the test log, a counter's value, small builders (a file, a
// fake ACP agent, a fake CLI script), and a testing.TB that records what
// a test helper reports (FakeTB), for the tests of test kits. It imports no project
// package but internal/ci, so that any package's own tests can import it
// without a cycle.
package testkit

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/agentbridge/agentbridge/internal/ci"
)

// WaitUntil polls cond until it holds and fails tb (Fatalf, naming what
// and the bound) when it still does not after timeout. It polls every
// millisecond at first and backs off to every 50 ms, so a cheap condition
// is seen at once and a costly one is not called in a busy loop. cond runs
// on the caller's goroutine, so it may itself fail tb at once (e.g. on an
// error no wait can mend).
func WaitUntil(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	WaitUntilSeen(tb, what, timeout, func() (bool, string) { return cond(), "" })
}

// WaitUntilSeen is WaitUntil for a condition that also says what it saw
// (a state, the calls so far): when the wait times out, the failure ends
// with the last poll's account, "; saw: " and seen.
func WaitUntilSeen(tb testing.TB, what string, timeout time.Duration, cond func() (ok bool, seen string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if seen != "" {
				seen = "; saw: " + seen
			}
			tb.Fatalf("timed out after %s waiting for %s%s", timeout, what, seen)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// NeedTool returns the path of the program name on PATH. When it is
// missing the test is skipped (hint says how to install it, e.g. a make
// target), except under CI (ci.Strict) where that is a failure.
func NeedTool(tb testing.TB, name, hint string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(tb, "%s not on PATH (%s): %v", name, hint, err)
	}
	return p
}

// RequireClaude returns the path of the claude CLI; it skips the test
// when the CLI is missing, except under CI where that is a failure.
func RequireClaude(tb testing.TB) string {
	tb.Helper()
	return NeedTool(tb, "claude", "make claude")
}

// NeedBwrap returns the path of bwrap; it skips the test when bwrap is
// missing, except under CI where that is a failure.
func NeedBwrap(tb testing.TB) string {
	tb.Helper()
	return NeedTool(tb, "bwrap", "apt-get install bubblewrap")
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers and readers,
// e.g. a child process's output or a logger's sink read by the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logger returns a debug-level text logger whose lines go to tb.Log, so
// they show with the test that wrote them (and only when it fails or
// runs with -v).
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(LogWriter(tb), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// LogWriter is an io.Writer that logs each write through tb.Log, without
// its trailing newline.
func LogWriter(tb testing.TB) *TBWriter { return &TBWriter{tb: tb} }

// TBWriter is LogWriter's writer.
type TBWriter struct{ tb testing.TB }

// Write logs p through tb.Log.
func (w *TBWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Must fails the test when err is not nil.
func Must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// FakeCLI writes script as an executable /bin/sh script in a temporary
// directory and returns its path: a stand-in for a CLI in tests.
func FakeCLI(tb testing.TB, script string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "fake-claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BuildFakeACP builds the fake ACP agent (agent/acp/fakeacp) into a
// temporary directory and returns the binary's path.
func BuildFakeACP(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "fakeacp")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agentbridge/agentbridge/agent/acp/fakeacp")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build fakeacp: %v\n%s", err, out)
	}
	return bin
}

// SkipOrFail skips the test with the reason, except under CI (ci.Strict)
// where a missing prerequisite is a failure.
func SkipOrFail(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if ci.Strict() {
		tb.Fatalf(format+" (under CI this is a failure)", args...)
	}
	tb.Skipf(format, args...)
}

// CounterValue sums the samples of the counter name in reg whose labels
// include every name=value of labels (nil: all samples).
func CounterValue(tb testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	tb.Helper()
	families, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for k, v := range labels {
				if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == k && l.GetValue() == v }) {
					continue metrics
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// WriteFile writes content to path (mode 0600), creating its directory,
// and fails the test on an error.
func WriteFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}
