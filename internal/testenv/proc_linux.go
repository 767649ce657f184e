package testenv

import "syscall"

// sysProcAttr puts the child in its own process group, so stop can signal
// everything it may have spawned, and has the kernel SIGKILL it when the test
// binary dies (a panic, a -timeout abort, a kill), so no control-plane
// process outlives the tests that started it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
