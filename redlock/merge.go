package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Merging. Neighbouring acquires in a batcher's pipeline go to the master as
// one call of acquire_many.lua: the master runs one script instead of one
// per lock, and reads what the locks share (the certificate, the
// incarnation, the floor, the fence-bucket count, the clock and each TTL's
// lambda entry) once. Each lock is answered apart, as acquire.lua would
// answer it, its error (a key of another type) its own. A lone acquire
// stays a call of acquire.lua, which costs its master less. Neighbouring
// releases of one key each go as one call of release.lua, which takes any
// number of keys and answers each apart too. Only neighbours of one kind
// merge, so the pipeline's order holds: a release chained in front of the
// next head's acquire stays in front of it.
// docs/design.md (Auto-pipelining) has the layout, docs/performance.md what
// merging saves.

// maxMerge bounds the locks of one merged call: the master runs the call
// atomically, and other clients wait behind it.
const maxMerge = 32

// merger says how calls of one script join a call of another that takes
// many locks: which of a call's keys and arguments every lock shares (taken
// once, from the first call), and which are its lock's own (taken from each
// call, in order). The script answers one reply per lock.
type merger struct {
	into                 *redis.Script
	sharedKeys, lockKeys []int
	sharedArgs, lockArgs []int
	// listed says that a lone call answers a list of one reply per lock (a
	// release of one key), so each lock's part of a merged answer is
	// handed on as a list of one.
	listed bool
}

// acquireMerge merges acquire.lua's calls into acquire_many.lua's (both
// scripts' headers have the layouts): KEYS fence-bucket count, floor,
// certificate, lambda set, incarnation, then per lock the key, its
// bucket's counter and its earlier-version counter; ARGV the fence-bucket
// count, then per lock the value, TTL, proposal, released value and
// release channel.
var acquireMerge = &merger{
	into:       acquireManyScript,
	sharedKeys: []int{6, 3, 4, 5, 7},
	lockKeys:   []int{0, 1, 2},
	sharedArgs: []int{5},
	lockArgs:   []int{0, 1, 2, 3, 4},
}

// releaseMerge merges release.lua's calls of one key into one call of
// release.lua: KEYS the lock keys; ARGV the channel prefix, then each key's
// value.
var releaseMerge = &merger{
	into:       releaseScript,
	lockKeys:   []int{0},
	sharedArgs: []int{0},
	lockArgs:   []int{1},
	listed:     true,
}

// mergeable reports whether b may join a merged call that starts with a:
// the same merger, and the same shared keys and arguments.
func mergeable(a, b *scriptCall) bool {
	m := a.merge
	if m == nil || b.merge != m {
		return false
	}
	for _, i := range m.sharedKeys {
		if a.keys[i] != b.keys[i] {
			return false
		}
	}
	for _, i := range m.sharedArgs {
		if a.args[i] != b.args[i] {
			return false
		}
	}
	return true
}

// merge makes one call of m.into out of run, whose calls are mergeable.
func (m *merger) merge(run []*queued) *scriptCall {
	first := run[0].call
	keys := make([]string, 0, len(m.sharedKeys)+len(run)*len(m.lockKeys))
	args := make([]any, 0, len(m.sharedArgs)+len(run)*len(m.lockArgs))
	for _, i := range m.sharedKeys {
		keys = append(keys, first.keys[i])
	}
	for _, i := range m.sharedArgs {
		args = append(args, first.args[i])
	}
	lineage := false
	for _, q := range run {
		for _, i := range m.lockKeys {
			keys = append(keys, q.call.keys[i])
		}
		for _, i := range m.lockArgs {
			args = append(args, q.call.args[i])
		}
		lineage = lineage || q.call.lineage
	}
	sc := newScriptCall(m.into, keys, args...)
	sc.lineage = lineage
	return sc
}

// sending is one command of a pipeline: a call, and the queued calls it
// answers (one, or a merged run).
type sending struct {
	call *scriptCall
	of   []*queued
}

// sendings groups live into the pipeline's commands, in order, merging
// runs of mergeable neighbours.
func sendings(live []*queued) []sending {
	out := make([]sending, 0, len(live))
	for i := 0; i < len(live); {
		j := i + 1
		for j < len(live) && j-i < maxMerge && mergeable(live[i].call, live[j].call) {
			j++
		}
		s := sending{call: live[i].call, of: live[i:j]}
		if j-i > 1 {
			s.call = live[i].call.merge.merge(live[i:j])
		}
		out = append(out, s)
		i = j
	}
	return out
}

// deadline is the earliest of its calls' deadlines: a merged call answered
// NOSCRIPT is sent again only while none of its calls is past its own.
func (s sending) deadline() time.Time {
	d := s.of[0].deadline
	for _, q := range s.of[1:] {
		if q.deadline.Before(d) {
			d = q.deadline
		}
	}
	return d
}

// answer gives each of its calls its answer: a merged call's is split.
func (s sending) answer(cmd *redis.Cmd, lineage seen) {
	if len(s.of) == 1 {
		s.of[0].to.answer(cmd, lineage)
		return
	}
	for i, part := range s.of[0].call.merge.split(cmd, len(s.of)) {
		s.of[i].to.answer(part, lineage)
	}
}

// split gives each of the n locks of a merged call its own answer: the
// call's error for all when it failed as a whole, else its reply's element
// (a list of one when m.listed).
func (m *merger) split(cmd *redis.Cmd, n int) []*redis.Cmd {
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
			} else if m.listed {
				out[i].SetVal([]any{res[i]})
			} else {
				out[i].SetVal(res[i])
			}
		}
	}
	return out
}
