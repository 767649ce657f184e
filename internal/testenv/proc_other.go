//go:build unix && !linux

package testenv

import "syscall"

// sysProcAttr puts the child in its own process group, so stop can signal
// everything it may have spawned. Only Linux can tie the child's life to the
// test binary's; elsewhere a crashed test binary may leave it running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
