//go:build !linux

package cli

import "syscall"

// childAttr: outside Linux there is no parent-death signal; a command whose
// redlockctl was killed runs on without the lock (its fencing token still
// stops its stale writes).
func childAttr() *syscall.SysProcAttr { return nil }
