package egress

import "syscall"

// childProcAttr has the kernel kill the forwarder's child when the
// forwarder dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
