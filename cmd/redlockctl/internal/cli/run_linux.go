package cli

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// childAttr starts the command in a session (and so a process group) of
// its own, whose id is the command's pid: run signals that whole group, so
// that a job script's own children (a loop in a child shell, a pipeline)
// stop with it when the lease is lost. A session of its own also keeps the
// terminal's signals (Ctrl-C) to redlockctl, which forwards them to the
// group; the command has no controlling terminal (it cannot open /dev/tty).
//
// Pdeathsig makes the kernel SIGKILL the command if redlockctl itself dies
// (kill -9, OOM): nobody extends the lease any more, so the command must not
// go on as if it held the lock. The signal follows the death of the thread
// that started the child; the Go runtime ends a thread only when a goroutine
// locked to it (runtime.LockOSThread) exits, which redlockctl never does.
// It reaches the command only, not the rest of its group.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// groupSignals says whether signalGroup reaches the whole process group.
const groupSignals = true

// signalGroup sends sig to every process of the command's group. The group
// id is the command's pid, which stays reserved for it while the command is
// not reaped (awaitExit leaves it a zombie), so the signal never reaches a
// stranger's group.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nobody left
	}
	return err
}

// awaitExit blocks until the command has exited, without reaping it (its
// pid, the group's id, stays taken until cmd.Wait). reaped is false.
func awaitExit(cmd *exec.Cmd) (reaped bool, err error) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return false, err
		}
	}
}

// groupRunning reports whether a process of group pgid other than a zombie
// (the command itself, exited and not yet reaped) is still there: its
// children, grandchildren and so on, unless they left the group.
func groupRunning(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			return true
		}
	}
	return false
}
