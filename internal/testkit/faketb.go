package testkit

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// FakeTB is a testing.TB for the tests of test helpers: it records the
// failures and skips a helper reports instead of failing the test. Error
// and Errorf record and go on; Fatal, Fatalf and Skipf record and stop
// the calling goroutine (runtime.Goexit) as the real ones do, so run the
// helper through RunTB. Cleanup functions run at the end of RunTB, the
// last registered first. The other methods of testing.TB are not
// implemented (they panic).
type FakeTB struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	skipped  bool
	cleanups []func()
}

// RunTB calls fn with a new FakeTB on a goroutine of its own, then the
// cleanups fn registered, and returns the FakeTB once all have ended.
func RunTB(fn func(tb *FakeTB)) *FakeTB {
	tb := &FakeTB{}
	var wg sync.WaitGroup
	wg.Go(func() { fn(tb) })
	wg.Wait()
	wg.Go(func() {
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
	})
	wg.Wait()
	return tb
}

// Failures returns the failures reported so far, in order.
func (f *FakeTB) Failures() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.failures...)
}

// Failure returns the first failure reported ("" for none).
func (f *FakeTB) Failure() string {
	if fs := f.Failures(); len(fs) > 0 {
		return fs[0]
	}
	return ""
}

// Skipped reports whether Skipf was called.
func (f *FakeTB) Skipped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.skipped
}

// Helper does nothing.
func (f *FakeTB) Helper() {}

// Cleanup registers fn to run at the end of RunTB.
func (f *FakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// Error records a failure.
func (f *FakeTB) Error(args ...any) { f.record(fmt.Sprint(args...)) }

// Errorf records a failure.
func (f *FakeTB) Errorf(format string, args ...any) { f.record(fmt.Sprintf(format, args...)) }

// Fatal records a failure and stops the calling goroutine.
func (f *FakeTB) Fatal(args ...any) {
	f.record(fmt.Sprint(args...))
	runtime.Goexit()
}

// Fatalf records a failure and stops the calling goroutine.
func (f *FakeTB) Fatalf(format string, args ...any) {
	f.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Skipf records a skip and stops the calling goroutine.
func (f *FakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped = true
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *FakeTB) record(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, msg)
}
