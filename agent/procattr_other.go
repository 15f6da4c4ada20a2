//go:build !linux

package agent

import "syscall"

// procAttr puts the agent in its own process group (no parent-death
// signal outside Linux: an agent may outlive a bridge killed with SIGKILL).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
