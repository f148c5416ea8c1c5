package redlock

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// Merging. The acquires a batcher worker sends to its master one after
// another go as one call of acquire.lua, which takes many locks: the master
// runs one script instead of one per lock, and reads what the locks share
// (the certificate, the incarnation, the floor, the fence-bucket count,
// the clock and each TTL's lambda entry) once. A lock's error (a key of
// another type) stays its own: the script answers each lock apart.
// Only neighbours merge, so the pipeline's order holds: a release chained in
// front of the next head's acquire stays in front of it
// (docs/performance.md has what merging saves).

// maxMerge bounds the locks of one merged call: the master runs the call
// atomically, and other clients wait behind it.
const maxMerge = 32

// lockLayout is how a script that takes several locks lays out its keys and
// arguments: the first shared of each are common to every lock, and the
// rest come perLock at a time. The zero lockLayout is a script of one lock.
type lockLayout struct {
	sharedKeys, sharedArgs   int
	keysPerLock, argsPerLock int
}

// acquireLayout is acquire.lua's: five shared keys (fence-bucket count,
// floor, certificate, lambda set, incarnation), the fence-bucket count as
// its one shared argument, and three keys and five arguments per lock.
var acquireLayout = lockLayout{sharedKeys: 5, sharedArgs: 1, keysPerLock: 3, argsPerLock: 5}

// mergeable reports whether b may join a merged call that starts with a.
func mergeable(a, b *scriptCall) bool {
	l := a.perLock
	return l != lockLayout{} && b.perLock == l && b.script == a.script &&
		slices.Equal(a.keys[:l.sharedKeys], b.keys[:l.sharedKeys]) &&
		slices.Equal(a.args[:l.sharedArgs], b.args[:l.sharedArgs])
}

// sending is one command of a pipeline: the call, and the queued calls it
// answers (one, or the merged run).
type sending struct {
	call *scriptCall
	of   []*queued
}

// deadline is the latest of its calls' deadlines.
func (s sending) deadline() time.Time {
	var d time.Time
	for _, q := range s.of {
		d = later(d, q.deadline)
	}
	return d
}

// answer gives each of its calls its answer: a call of several locks is
// answered lock by lock.
func (s sending) answer(cmd *redis.Cmd, lineage seen) {
	if s.call.perLock == (lockLayout{}) {
		s.of[0].to.answer(cmd, lineage)
		return
	}
	for i, part := range split(cmd, len(s.of)) {
		s.of[i].to.answer(part, lineage)
	}
}

// sendings groups live into the pipeline's commands, merging runs of
// neighbours that may share a call, in order.
func sendings(live []*queued) []sending {
	out := make([]sending, 0, len(live))
	for i := 0; i < len(live); {
		j := i + 1
		for j < len(live) && j-i < maxMerge && mergeable(live[i].call, live[j].call) {
			j++
		}
		s := sending{call: live[i].call, of: live[i:j]}
		if j-i > 1 {
			s.call = merge(live[i:j])
		}
		out = append(out, s)
		i = j
	}
	return out
}

// merge makes one call of the calls in run, which are mergeable.
func merge(run []*queued) *scriptCall {
	first := run[0].call
	l := first.perLock
	keys := make([]string, 0, l.sharedKeys+len(run)*l.keysPerLock)
	args := make([]any, 0, l.sharedArgs+len(run)*l.argsPerLock)
	keys = append(keys, first.keys[:l.sharedKeys]...)
	args = append(args, first.args[:l.sharedArgs]...)
	lineage := false
	for _, q := range run {
		keys = append(keys, q.call.keys[l.sharedKeys:]...)
		args = append(args, q.call.args[l.sharedArgs:]...)
		lineage = lineage || q.call.lineage
	}
	sc := newScriptCall(first.script, keys, args...)
	sc.lineage, sc.perLock = lineage, l
	return sc
}

// split gives each of the n locks of a call its own answer: the call's
// error for all when it failed as a whole, else its reply's element.
func split(cmd *redis.Cmd, n int) []*redis.Cmd {
	out := make([]*redis.Cmd, n)
	res, err := cmd.Slice()
	if err == nil && len(res) != n {
		err = fmt.Errorf("the script answered %d locks of %d", len(res), n)
	}
	for i := range out {
		out[i] = redis.NewCmd(context.Background())
		switch {
		case err != nil:
			out[i].SetErr(err)
		default:
			if e, ok := res[i].(error); ok {
				out[i].SetErr(e)
			} else {
				out[i].SetVal(res[i])
			}
		}
	}
	return out
}
