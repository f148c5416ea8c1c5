package redlock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Releases queued together for one master go as one call of release.lua,
// and each key is answered alone: on master 2, where the deletes queued
// behind a gate, every lease's key is gone but the one another owner took
// there (left as it is) and the one that became a list there (its error
// stays its own: the keys merged with it are deleted).
func TestMergedReleasesAnswerEachKey(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t, WithMasterTimeout(20*time.Second))
	warmUpEverywhere(t, r, c)
	ctx := context.Background()
	const n = 12
	leases := make([]*Lease, n)
	for i := range leases {
		l, err := c.TryLock(ctx, fmt.Sprintf("release-merged:%d", i), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = l
	}
	taken, listed := leases[n-1].key, leases[n/2].key // queued: not one of the calls at the gate
	r.admin(t, 2, "SET", taken, "another owner's")
	r.admin(t, 2, "DEL", listed)
	r.admin(t, 2, "LPUSH", listed, "not a lock")

	gate := newPipelineGate("evalsha", true)
	r.clients[2].AddHook(gate)
	t.Cleanup(gate.open)
	answers := &releaseAnswers{of: map[string]any{}}
	r.clients[2].AddHook(answers)
	release := func(l *Lease) {
		if err := l.Release(ctx); err != nil { // masters 0 and 1 confirm
			t.Fatalf("%s: %v", l.key, err)
		}
	}
	for _, l := range leases[:batchWorkers] {
		release(l)
	}
	eventually(t, 10*time.Second, "both of master 2's workers at the gate", func() bool { return gate.heldNow() == batchWorkers })
	for _, l := range leases[batchWorkers:] {
		release(l)
	}
	gate.open()

	eventually(t, 10*time.Second, "master 2 deleted every key of ours", func() bool {
		for _, l := range leases {
			n, err := r.clients[2].Exists(ctx, l.key).Result()
			if err != nil || (n == 1) != (l.key == taken || l.key == listed) {
				return false
			}
		}
		return true
	})
	merged := gate.mergedCalls(releaseMerge)
	if !slices.ContainsFunc(merged, func(keys []string) bool { return slices.Contains(keys, taken) && slices.Contains(keys, listed) }) {
		t.Fatalf("%s and %s did not go in one merged release: %v", taken, listed, gate.sent)
	}
	for _, l := range leases {
		got, want := answers.get(l.key), any(int64(1))
		switch l.key {
		case taken:
			want = int64(-1)
		case listed:
			if err, ok := got.(error); ok && firstWord(err) == "WRONGTYPE" {
				continue
			}
			want = "WRONGTYPE"
		}
		if got != want {
			t.Errorf("%s: master 2 answered %v; want %v", l.key, got, want)
		}
	}
	if v, err := r.clients[2].Get(ctx, taken).Result(); err != nil || v != "another owner's" {
		t.Errorf("%s on master 2: %q, %v; want another owner's key untouched", taken, v, err)
	}
	if typ, err := r.clients[2].Type(ctx, listed).Result(); err != nil || typ != "list" {
		t.Errorf("%s on master 2: type %q, %v; want the list untouched", listed, typ, err)
	}
	for i := range 2 {
		for _, l := range leases {
			if n, err := r.clients[i].Exists(ctx, l.key).Result(); err != nil || n != 0 {
				t.Errorf("%s on master %d: exists %d, %v", l.key, i, n, err)
			}
		}
	}
}

// A release merged with others (release.lua with many keys) answers, deletes
// and publishes as the same release alone: each case prepares the same state
// on two masters, runs one key's release alone on master 0 and the same
// release between two others on master 1, then compares the answers, the
// key after and the PUBLISHes each master ran. Its neighbours are a list
// (an error of theirs must not leak into the case's answer), a key that is
// not there and another owner's key, and must be answered so.
func TestMergedAndLoneReleasesAgree(t *testing.T) {
	r := newRig(t, 2)
	ctx := context.Background()
	type step func(rc redis.UniversalClient, key string) error
	cases := []struct {
		name  string
		state step
	}{
		{name: "own value", state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, key, "mine", time.Minute).Err() }},
		{name: "not there"},
		{name: "another's", state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, key, "other", time.Minute).Err() }},
		{name: "another type", state: func(rc redis.UniversalClient, key string) error { return rc.LPush(ctx, key, "x").Err() }},
	}
	for i, tc := range cases {
		for _, publish := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/publish=%v", tc.name, publish), func(t *testing.T) {
				key := fmt.Sprintf("release-agree:%d:%v", i, publish)
				call := func(k, value string) *queued {
					return &queued{call: releaseScriptRequest([]string{k}, []string{value}, publish).call}
				}
				publishes := make([]int64, len(r.clients))
				for j, rc := range r.clients {
					if err := rc.FlushAll(ctx).Err(); err != nil {
						t.Fatal(err)
					}
					if tc.state != nil {
						if err := tc.state(rc, key); err != nil {
							t.Fatal(err)
						}
					}
					if err := rc.LPush(ctx, key+":list", "x").Err(); err != nil {
						t.Fatal(err)
					}
					if err := rc.Set(ctx, key+":other", "other", time.Minute).Err(); err != nil {
						t.Fatal(err)
					}
					publishes[j] = publishCalls(t, rc)
				}
				lone := call(key, "mine").call
				loneCmd := lone.script.Run(ctx, r.clients[0], lone.keys, lone.args...)
				run := []*queued{call(key+":list", "mine"), call(key, "mine"), call(key+":absent", "mine"), call(key+":other", "mine")}
				merged := releaseMerge.merge(run)
				parts := releaseMerge.split(merged.script.Run(ctx, r.clients[1], merged.keys, merged.args...), len(run))

				parse := releaseScriptRequest([]string{key}, []string{"mine"}, publish).parse
				la, lerr := parse(loneCmd)
				ma, merr := parse(parts[1])
				if firstWord(lerr) != firstWord(merr) || !slices.Equal(la, ma) {
					t.Fatalf("alone: %v, %v; merged: %v, %v", la, lerr, ma, merr)
				}
				if _, err := parse(parts[0]); firstWord(err) != "WRONGTYPE" {
					t.Errorf("the list answered %v; want WRONGTYPE", err)
				}
				if got, err := parse(parts[2]); err != nil || !slices.Equal(got, []int64{0}) {
					t.Errorf("the key not there answered %v, %v; want [0]", got, err)
				}
				if got, err := parse(parts[3]); err != nil || !slices.Equal(got, []int64{-1}) {
					t.Errorf("another's key answered %v, %v; want [-1]", got, err)
				}
				a, errA := r.clients[0].Get(ctx, key).Result()
				b, errB := r.clients[1].Get(ctx, key).Result()
				if a != b || firstWord(errA) != firstWord(errB) {
					t.Errorf("%s after: %q (%v) alone, %q (%v) merged", key, a, errA, b, errB)
				}
				if pa, pb := publishCalls(t, r.clients[0])-publishes[0], publishCalls(t, r.clients[1])-publishes[1]; pa != pb {
					t.Errorf("PUBLISH ran %d times alone, %d times merged", pa, pb)
				}
			})
		}
	}
}

// publishCalls is how many PUBLISH commands the server ran, its scripts'
// included (INFO commandstats).
func publishCalls(t *testing.T, rc redis.UniversalClient) int64 {
	t.Helper()
	info, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_publish:calls="); ok {
			var n int64
			if _, err := fmt.Sscanf(rest, "%d,", &n); err != nil {
				t.Fatalf("INFO commandstats: %q: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// releaseAnswers is a go-redis hook that records, per key, what the master
// answered the first release.lua call of it (merged calls are split per
// key): 1, 0, -1, or an error.
type releaseAnswers struct {
	mu sync.Mutex
	of map[string]any
}

func (h *releaseAnswers) get(key string) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.of[key]
}

func (h *releaseAnswers) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *releaseAnswers) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *releaseAnswers) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, cmd := range cmds {
			if mergerOf(cmd.Args()) != releaseMerge {
				continue
			}
			keys := lockKeys(releaseMerge, cmd.Args())
			res, err := cmd.(*redis.Cmd).Slice()
			for i, k := range keys {
				if _, seen := h.of[k]; seen {
					continue
				}
				switch {
				case err != nil:
					h.of[k] = err
				case len(res) == len(keys):
					h.of[k] = res[i]
				}
			}
		}
		return err
	}
}
