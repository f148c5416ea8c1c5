//go:build !linux

package cli

import (
	"os"
	"os/exec"
	"syscall"
)

// childAttr: outside Linux the command runs in redlockctl's process group
// and there is no parent-death signal: run signals the command only (not
// its children), and a command whose redlockctl was killed runs on without
// the lock (its fencing token still stops its stale writes).
func childAttr() *syscall.SysProcAttr { return nil }

// groupSignals says whether signalGroup reaches the whole process group.
const groupSignals = false

// signalGroup sends sig to the command only.
func signalGroup(p *os.Process, sig syscall.Signal) error { return p.Signal(sig) }

// awaitExit waits for the command and reaps it (reaped is true, err is
// cmd.Wait's): without a group of its own there is no group id to keep
// reserved.
func awaitExit(cmd *exec.Cmd) (reaped bool, err error) {
	return true, cmd.Wait()
}

// groupRunning: no group of the command's own to look at.
func groupRunning(int) bool { return false }
