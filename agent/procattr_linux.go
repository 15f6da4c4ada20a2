package agent

import "syscall"

// procAttr puts the agent in its own process group and has the kernel
// SIGKILL it when the bridge dies (even by SIGKILL). Descendants that leave
// the group or the session are not covered: the sandbox's PID namespace is
// what takes them along (see agent/sandbox).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
