package cli

import "syscall"

// childAttr makes the kernel SIGKILL the command if redlockctl itself dies
// (kill -9, OOM): nobody extends the lease any more, so the command must not
// go on as if it held the lock. The signal follows the death of the thread
// that started the child; the Go runtime ends a thread only when a goroutine
// locked to it (runtime.LockOSThread) exits, which redlockctl never does.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
