package cli

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is run's command once started: on Linux the leader of its own
// process group (see childAttr), signalled as a group.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the command has exited
	reaped bool          // awaitExit already reaped it (outside Linux)
	err    error         // awaitExit's error

	mu   sync.Mutex
	done bool // wait began reaping: the group id may be anyone's from then on
}

// watch starts waiting for the command's end.
func watch(cmd *exec.Cmd) *proc {
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.reaped, p.err = awaitExit(cmd)
		close(p.exited)
	}()
	return p
}

// signal sends sig to the command's process group (the command only,
// outside Linux). Once wait has begun to reap the command it does nothing: the command's pid,
// the group's id, may then be reused.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		_ = signalGroup(p.cmd.Process, sig)
	}
}

// wait waits for the command's end and reaps it: cmd.Wait's error.
func (p *proc) wait() error {
	<-p.exited
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	if p.reaped {
		return p.err
	}
	return p.cmd.Wait()
}

// gone reports whether the command has exited and nothing of its group
// runs any more.
func (p *proc) gone() bool {
	select {
	case <-p.exited:
		return !groupRunning(p.cmd.Process.Pid)
	default:
		return false
	}
}

// groupPoll is how often stop looks whether the group has ended.
const groupPoll = 10 * time.Millisecond

// waitGone waits until gone, or until stop fires (false).
func (p *proc) waitGone(stop <-chan time.Time) bool {
	t := time.NewTicker(groupPoll)
	defer t.Stop()
	for !p.gone() {
		select {
		case <-stop:
			return p.gone()
		case <-p.exited:
			// look again at once, then poll for the rest of the group
		case <-t.C:
		}
	}
	return true
}

// killWait bounds the wait for a SIGKILLed group to disappear (a process in
// uninterruptible sleep may linger): run then says so and exits anyway.
const killWait = 10 * time.Second

// stop ends the command's whole process group: SIGTERM, then SIGKILL after
// grace to whatever of the group still runs, and reaps the command. It
// returns cmd.Wait's error.
func (p *proc) stop(w io.Writer, grace time.Duration, why string) error {
	what := fmt.Sprintf("process group %d", p.cmd.Process.Pid)
	if !groupSignals {
		what = fmt.Sprintf("pid %d", p.cmd.Process.Pid)
	}
	fmt.Fprintf(w, "%s: sending SIGTERM to %s (SIGKILL in %v)\n", why, what, grace)
	p.signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	if !p.waitGone(t.C) {
		fmt.Fprintf(w, "redlockctl: run: %s still running after %v: SIGKILL\n", what, grace)
		p.signal(syscall.SIGKILL)
		k := time.NewTimer(killWait)
		defer k.Stop()
		if !p.waitGone(k.C) {
			fmt.Fprintf(w, "redlockctl: run: %s still there %v after SIGKILL\n", what, killWait)
		}
	}
	return p.wait()
}
