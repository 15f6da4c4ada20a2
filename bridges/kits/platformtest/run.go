package platformtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// Running is an adapter's Run in progress, started by Run.
type Running struct {
	done    chan error
	timeout time.Duration
}

// Run calls p.Run with h on its own goroutine until the test ends: the
// cleanup cancels Run's context and fails tb when Run then returns an
// error or does not return within timeout. A test that expects Run to end
// by itself takes its error with Err.
func Run(tb testing.TB, p bridges.Platform, h bridges.Handler, timeout time.Duration) *Running {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{done: make(chan error, 1), timeout: timeout}
	go func() { r.done <- p.Run(ctx, h) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				tb.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(timeout):
			tb.Error("Run did not return after cancel")
		}
	})
	return r
}

// Err waits for Run to return by itself and returns its error; it fails
// tb when Run does not return within Run's timeout. The cleanup then
// checks nothing more.
func (r *Running) Err(tb testing.TB) error {
	tb.Helper()
	select {
	case err := <-r.done:
		r.done <- nil // for the cleanup
		return err
	case <-time.After(r.timeout):
		tb.Fatalf("Run did not return within %s", r.timeout)
		return nil
	}
}

// WantFailure fails tb unless err is (or wraps) a *bridges.Failure with
// remedy whose Reason mentions each of reason and whose Hint each of hint.
func WantFailure(tb testing.TB, err error, remedy string, reason, hint []string) {
	tb.Helper()
	var f *bridges.Failure
	if !errors.As(err, &f) {
		tb.Fatalf("Run = %v (%T), want a *bridges.Failure", err, err)
	}
	var wrong []string
	if f.Remedy != remedy {
		wrong = append(wrong, fmt.Sprintf("remedy = %q, want %q", f.Remedy, remedy))
	}
	for _, s := range reason {
		if !strings.Contains(f.Reason, s) {
			wrong = append(wrong, fmt.Sprintf("reason %q does not mention %q", f.Reason, s))
		}
	}
	for _, s := range hint {
		if !strings.Contains(f.Hint, s) {
			wrong = append(wrong, fmt.Sprintf("hint %q does not mention %q", f.Hint, s))
		}
	}
	if len(wrong) > 0 {
		tb.Errorf("%s", strings.Join(wrong, "; "))
	}
}
