package platformtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// fakeTB records failures and cleanups; Fatalf stops the calling
// goroutine as the real one does.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Cleanup(fn func())         { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Error(args ...any)         { f.fail(fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(s string, a ...any) { f.fail(fmt.Sprintf(s, a...)) }
func (f *fakeTB) Fatalf(s string, a ...any) {
	f.fail(fmt.Sprintf(s, a...))
	runtime.Goexit()
}

func (f *fakeTB) fail(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, msg)
}

// finish runs fn with tb on its own goroutine, then tb's cleanups, and
// returns the failures.
func (f *fakeTB) finish(fn func(tb *fakeTB)) []string {
	var wg sync.WaitGroup
	wg.Go(func() {
		fn(f)
		for i := len(f.cleanups) - 1; i >= 0; i-- {
			f.cleanups[i]()
		}
	})
	wg.Wait()
	return f.failures
}

// runner is a platform whose Run returns err at once, or when its
// context ends (block), or never returns before release is closed.
type runner struct {
	Quiet
	err     error
	block   bool
	release chan struct{}
}

func (r runner) Run(ctx context.Context, _ bridges.Handler) error {
	switch {
	case r.release != nil:
		<-r.release
		return nil
	case r.block:
		<-ctx.Done()
		return r.err
	}
	return r.err
}

// TestRun: Err takes the error Run ended with by itself (the cleanup then
// checks nothing); the cleanup fails the test when Run, cancelled,
// returns an error or does not return in time.
func TestRun(t *testing.T) {
	errGone := errors.New("token revoked")
	var got error
	if fs := (&fakeTB{}).finish(func(tb *fakeTB) { got = Run(tb, runner{err: errGone}, nil, time.Second).Err(tb) }); len(fs) != 0 || got != errGone {
		t.Errorf("Err = %v, failures %q; want the error and no failure", got, fs)
	}
	if fs := (&fakeTB{}).finish(func(tb *fakeTB) { Run(tb, runner{block: true}, nil, time.Second) }); len(fs) != 0 {
		t.Errorf("a Run that ends nil when cancelled: failures %q", fs)
	}
	fs := (&fakeTB{}).finish(func(tb *fakeTB) { Run(tb, runner{block: true, err: errGone}, nil, time.Second) })
	if len(fs) != 1 || !strings.Contains(fs[0], "token revoked after cancel") {
		t.Errorf("a Run that fails when cancelled: failures %q", fs)
	}
	release := make(chan struct{})
	defer close(release)
	fs = (&fakeTB{}).finish(func(tb *fakeTB) { Run(tb, runner{release: release}, nil, 20*time.Millisecond) })
	if len(fs) != 1 || fs[0] != "Run did not return after cancel" {
		t.Errorf("a Run that does not return: failures %q", fs)
	}
	fs = (&fakeTB{}).finish(func(tb *fakeTB) { Run(tb, runner{release: release}, nil, 20*time.Millisecond).Err(tb) })
	if len(fs) < 1 || fs[0] != "Run did not return within 20ms" {
		t.Errorf("Err on a Run that does not return: failures %q", fs)
	}
}

// TestWantFailure: a Failure with the remedy whose reason and hint say
// the words passes; another remedy, a missing word or no Failure fails.
func TestWantFailure(t *testing.T) {
	f := fmt.Errorf("bot b: %w", &bridges.Failure{Reason: "token 4004 rejected", Remedy: bridges.RemedyRestart, Hint: "fix the token"})
	if fs := (&fakeTB{}).finish(func(tb *fakeTB) {
		WantFailure(tb, f, bridges.RemedyRestart, []string{"4004"}, []string{"token"})
	}); len(fs) != 0 {
		t.Errorf("a matching failure: %q", fs)
	}
	for name, tc := range map[string]struct {
		err          error
		remedy       string
		reason, hint []string
		want         string
	}{
		"remedy":     {f, bridges.RemedyUpgrade, nil, nil, "remedy = "},
		"reason":     {f, bridges.RemedyRestart, []string{"4014"}, nil, `does not mention "4014"`},
		"hint":       {f, bridges.RemedyRestart, nil, []string{"scope"}, `does not mention "scope"`},
		"no failure": {errors.New("plain"), bridges.RemedyRestart, nil, nil, "want a *bridges.Failure"},
	} {
		fs := (&fakeTB{}).finish(func(tb *fakeTB) { WantFailure(tb, tc.err, tc.remedy, tc.reason, tc.hint) })
		if len(fs) != 1 || !strings.Contains(fs[0], tc.want) {
			t.Errorf("%s: failures %q, want one saying %q", name, fs, tc.want)
		}
	}
}
