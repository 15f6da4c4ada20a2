// Package harden makes the bridge's own process harder to reach from the
// agents it runs.
package harden

import (
	"fmt"
	"syscall"
)

// prSetDumpable is prctl's PR_SET_DUMPABLE.
const prSetDumpable = 4

// Process makes the bridge non-dumpable: other processes of the same
// Unix user (an agent run with sandbox: none) can no longer read its
// /proc/<pid>/environ or memory, nor attach a debugger to it. Root still
// can; the sandbox's PID namespace is what hides the bridge from agents.
func Process() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", errno)
	}
	return nil
}
