package cli

import "syscall"

// childAttr makes the kernel SIGKILL the command if redlockctl itself dies
// (kill -9, OOM): nobody extends the lease any more, so the command must not
// go on as if it held the lock.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
