//go:build !linux

package egress

import "syscall"

// childProcAttr: no parent-death signal outside Linux (the forwarder is
// only used with bubblewrap, which is Linux-only).
func childProcAttr() *syscall.SysProcAttr { return nil }
