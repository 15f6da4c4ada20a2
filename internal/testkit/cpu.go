//go:build unix

package testkit

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the user+system CPU time of this process so far, for
// benchmarks that report CPU per operation.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
