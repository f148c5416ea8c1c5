package report

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// builder writes a history by hand: events get their indices in order.
type builder struct{ events []history.Event }

func (b *builder) add(e history.Event) {
	e.Index = len(b.events)
	b.events = append(b.events, e)
}

func (b *builder) fault(kind, target string, from, to time.Duration) {
	b.add(history.Event{Process: history.NemesisProcess, Type: history.Info, F: history.Nemesis, Key: target, Value: kind + " start", TimeNS: int64(from)})
	b.add(history.Event{Process: history.NemesisProcess, Type: history.Info, F: history.Nemesis, Key: target, Value: kind + " stop", TimeNS: int64(to)})
}

func (b *builder) op(p int, f history.F, key string, typ history.Type, from, to time.Duration, token uint64, value string) {
	b.add(history.Event{Process: p, Type: history.Invoke, F: f, Key: key, Token: token, Value: map[bool]string{true: value}[f == history.Write], TimeNS: int64(from)})
	done := history.Event{Process: p, Type: typ, F: f, Key: key, Token: token, TimeNS: int64(to)}
	if f != history.Acquire {
		done.Value = value
	}
	b.add(done)
}

func (b *builder) acquire(p int, from, to time.Duration, token uint64, validUntil time.Duration) {
	b.add(history.Event{Process: p, Type: history.Invoke, F: history.Acquire, Key: "k", TimeNS: int64(from), TTLNS: int64(time.Second)})
	b.add(history.Event{Process: p, Type: history.OK, F: history.Acquire, Key: "k", Token: token, TimeNS: int64(to), ValidUntilNS: int64(validUntil)})
}

const ms = time.Millisecond

// brokenRun is a 6-second history in the order it happened (times only
// grow): holds of k one after another, then, during a restart, p2 and p3
// acquire k while p1 still holds it (three overlaps: 1–2, 1–3, 2–3); a
// pause, a partition and a kill before and after; register reads and
// writes with tokens, all of them linearizable.
func brokenRun() []history.Event {
	var b builder
	b.acquire(0, 100*ms, 120*ms, 1, 1070*ms)
	b.op(0, history.Write, "r", history.OK, 200*ms, 210*ms, 1, "a")
	b.fault("pause", "m1", 300*ms, 1200*ms)
	b.op(0, history.Read, "r", history.OK, 400*ms, 410*ms, 1, "a")
	b.op(0, history.Release, "k", history.OK, 600*ms, 610*ms, 0, "")
	b.acquire(1, 1300*ms, 1320*ms, 2, 2270*ms)
	b.op(1, history.Write, "r", history.OK, 1400*ms, 1410*ms, 2, "b")
	b.fault("restart", "m2", 1500*ms, 1550*ms)
	b.acquire(2, 1600*ms, 1630*ms, 3, 2580*ms)
	b.acquire(3, 1700*ms, 1740*ms, 4, 2690*ms)
	b.op(2, history.Write, "r", history.OK, 1800*ms, 1810*ms, 3, "c")
	b.op(1, history.Write, "r", history.Fail, 1900*ms, 1910*ms, 2, "b2")
	b.op(1, history.Release, "k", history.OK, 2000*ms, 2010*ms, 0, "")
	b.op(2, history.Release, "k", history.OK, 2100*ms, 2110*ms, 0, "")
	b.op(3, history.Release, "k", history.OK, 2200*ms, 2210*ms, 0, "")
	b.fault("partition", "c0-/-m3,m4", 2500*ms, 3800*ms)
	b.op(0, history.Acquire, "k", history.Fail, 2600*ms, 3600*ms, 0, "")
	b.acquire(1, 3900*ms, 3920*ms, 5, 4880*ms)
	b.fault("kill", "m0", 4000*ms, 5500*ms)
	b.op(1, history.Read, "r", history.OK, 4100*ms, 4110*ms, 5, "c")
	b.op(1, history.Release, "k", history.OK, 4500*ms, 4510*ms, 0, "")
	b.acquire(2, 5000*ms, 5020*ms, 6, 5990*ms)
	b.op(2, history.Release, "k", history.OK, 5600*ms, 5610*ms, 0, "")
	return b.events
}

// longRun is a run of d with clients slots of processes that live 3–8 s
// (seeded): each tries to acquire k every 50–250 ms and, when it gets it,
// reads and writes the register r with its token and releases it after
// 100–400 ms; a fault every 10 s among pause, kill, partition, restart and
// data-loss. It has the shape of a --long run (5 minutes, 10 clients), for
// the report's size; it is valid.
func longRun(d time.Duration, clients int) []history.Event {
	rng := rand.New(rand.NewPCG(18, 5))
	var all []history.Event
	add := func(p int, typ history.Type, f history.F, at time.Duration, token uint64, value string) {
		e := history.Event{Process: p, Type: typ, F: f, Key: "k", Token: token, Value: value, TimeNS: int64(at)}
		if f == history.Write || f == history.Read {
			e.Key = "r"
		}
		all = append(all, e)
	}
	type slot struct {
		p    int
		t    time.Duration
		life time.Duration
	}
	slots := make([]slot, clients)
	for i := range slots {
		t := time.Duration(rng.Int64N(int64(time.Second)))
		slots[i] = slot{p: i, t: t, life: t + time.Duration(3+rng.IntN(6))*time.Second}
	}
	var free time.Duration // when k is free again
	var token uint64
	value := ""
	for {
		s := &slots[0]
		for i := range slots {
			if slots[i].t < s.t {
				s = &slots[i]
			}
		}
		if s.t >= d {
			break
		}
		if s.t > s.life {
			s.p += clients
			s.life = s.t + time.Duration(3+rng.IntN(6))*time.Second
		}
		inv, lat := s.t, time.Duration(2+rng.IntN(30))*ms
		add(s.p, history.Invoke, history.Acquire, inv, 0, "")
		all[len(all)-1].TTLNS = int64(time.Second)
		if free > inv {
			add(s.p, history.Fail, history.Acquire, inv+lat, 0, "not acquired")
			s.t = inv + lat + time.Duration(50+rng.IntN(200))*ms
			continue
		}
		token++
		ok, hold := inv+lat, time.Duration(100+rng.IntN(300))*ms
		free = ok + hold
		add(s.p, history.OK, history.Acquire, ok, token, "")
		all[len(all)-1].ValidUntilNS = int64(ok + 900*ms)
		add(s.p, history.Invoke, history.Read, ok+ms, token, "")
		add(s.p, history.OK, history.Read, ok+3*ms, token, value)
		value = fmt.Sprintf("p%d-%d", s.p, token)
		add(s.p, history.Invoke, history.Write, ok+4*ms, token, value)
		add(s.p, history.OK, history.Write, ok+6*ms, token, value)
		add(s.p, history.Invoke, history.Release, ok+hold, 0, "")
		add(s.p, history.OK, history.Release, ok+hold+2*ms, 0, "")
		s.t = ok + hold + 2*ms + time.Duration(rng.IntN(100))*ms
	}
	kinds := []string{"pause", "kill", "partition", "restart", "data-loss"}
	for i, at := 0, 5*time.Second; at < d; i, at = i+1, at+10*time.Second {
		k := kinds[i%len(kinds)]
		all = append(all, history.Event{Process: history.NemesisProcess, Type: history.Info, F: history.Nemesis, Key: "m1", Value: k + " start", TimeNS: int64(at)},
			history.Event{Process: history.NemesisProcess, Type: history.Info, F: history.Nemesis, Key: "m1", Value: k + " stop", TimeNS: int64(at + 1500*ms)})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].TimeNS < all[j].TimeNS })
	for i := range all {
		all[i].Index = i
	}
	return all
}
