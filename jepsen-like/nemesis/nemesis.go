package nemesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// HoldMode is what a holder chosen by AwaitHold does.
type HoldMode int

const (
	// Linger: keep the lock until just before its validity ends.
	Linger HoldMode = iota
	// PauseClient: after its first write, stop until a TTL past its validity
	// (a GC-like pause), then write again with its old token.
	PauseClient
	// SlowExtend: once Armed (the masters' replies to it delayed past the
	// per-master timeout), extend the lease with a shorter TTL, then act
	// until just before the lease's validity, whatever the extend left.
	SlowExtend
	// Normal: behave as an untargeted holder (the nemesis only wants to
	// know that the hold happened, and when it ends).
	Normal
)

// Env is what the nemesis acts on; the suite implements it.
type Env interface {
	Backend() backend.Backend
	// SetCut cuts client slot off from masters (blocked) or restores the links.
	SetCut(slot int, masters []int, blocked bool)
	// SetRefused makes the links of slot to masters refuse connections
	// (refused) or restores them.
	SetRefused(slot int, masters []int, refused bool)
	// SetReplyDelay delays the masters' replies to slot by d (0: none).
	SetReplyDelay(slot int, masters []int, d time.Duration)
	// ResetMaster drops every client connection to master i (it moved).
	ResetMaster(i int)
	// AwaitHold waits until a process acquires the lock with an attempt
	// invoked at least settle after the call, tells it to behave as mode,
	// and returns its slot and a channel closed when that hold ends; ok is
	// false if none acquired before ctx ended.
	AwaitHold(ctx context.Context, mode HoldMode, settle time.Duration) (slot int, ended <-chan struct{}, ok bool)
	// PauseAcquisition makes the next acquisition of slot stop after its
	// rounds, before it checks the validity left: paused is closed once one
	// stopped, resume lets it go on (and disarms, if none stopped).
	PauseAcquisition(slot int) (paused <-chan struct{}, resume func())
	// Armed lets the holder AwaitHold handed out in mode SlowExtend go on:
	// its fault is in place.
	Armed()
	// Gate lets only the process of slot candidate start acquisitions until
	// Ungate: the others wait, so that the candidate is not held up by split
	// votes.
	Gate(candidate int)
	Ungate()
	// Bench keeps slot from starting acquisitions (benched) or lets it go on;
	// it holds whatever the gate says.
	Bench(slot int, benched bool)
	// AwaitUnbench lets a benched slot go on once a hold waiter is in place
	// and waits, as AwaitHold with no settle, for the first hold by an
	// acquisition invoked after: the slot's first acquisition is not missed.
	AwaitUnbench(ctx context.Context, slot int, mode HoldMode) (holder int, ended <-chan struct{}, ok bool)
	// AwaitIdle waits until no slot but except is between the start of an
	// acquisition and the end of its release; false if ctx ended first.
	AwaitIdle(ctx context.Context, except int) bool
	// Keep makes the process of slot live on past its lifetime (kept) or
	// lets it leave once that is over: a long-lived client.
	Keep(slot int, kept bool)
	// Rejoin ends the process of every slot but except and the kept ones
	// (Keep), waits (bounded by
	// ctx) until each has closed its connections, and replaces it with a
	// fresh one. One of them (the challenger) starts when
	// start is closed, the others when quiet is closed too, so that the
	// challenger is not held up by split votes among newcomers.
	Rejoin(ctx context.Context, except int, start, quiet <-chan struct{})
}

// Nemesis runs a schedule.
type Nemesis struct {
	env    Env
	rec    *history.Recorder
	log    *slog.Logger
	slots  int
	counts map[string]int
	lost   map[int]time.Time // master → when it last lost data
	// attached: masters whose replica Prepare attached and no failover
	// promoted yet.
	attached map[int]bool
}

// New returns a nemesis over env recording into rec; slots is the number of
// client slots. A nil logger discards.
func New(env Env, rec *history.Recorder, slots int, log *slog.Logger) *Nemesis {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Nemesis{env: env, rec: rec, log: log, slots: slots, counts: make(map[string]int), lost: make(map[int]time.Time),
		attached: make(map[int]bool)}
}

// Counts returns how many times each fault was injected. For data-loss,
// "data-loss" counts the steps that hit at least one master and
// "data-loss/<kind>" the masters that lost data that way.
func (n *Nemesis) Counts() map[string]int { return n.counts }

// Run injects the steps one after the other, each after its quiet gap,
// until they are done or ctx ends, healing each fault when it ends. It
// returns the errors of injections and heals, joined.
func (n *Nemesis) Run(ctx context.Context, sched generator.Schedule) error {
	var errs []error
	for _, st := range sched.Steps {
		if !sleep(ctx, st.After) {
			break
		}
		if err := n.step(ctx, st); err != nil {
			n.log.Warn("nemesis step failed", "fault", st.Fault, "err", err)
			errs = append(errs, fmt.Errorf("nemesis %s: %w", st.Fault, err))
		}
	}
	return errors.Join(errs...)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

func sleep(ctx context.Context, d time.Duration) bool { return sleepUntil(ctx, time.Now().Add(d)) }

func names(prefix string, ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = prefix + strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// step injects one fault and heals it. The "start" event is recorded once
// the fault is in place, the "stop" event before it is healed: between them
// the fault certainly held. Healing uses a context of its own, so that a
// cancelled run still heals.
func (n *Nemesis) step(ctx context.Context, st generator.Step) (err error) {
	heal := context.WithoutCancel(ctx)
	if generator.IsEpisode(st.Fault) {
		return n.episode(ctx, heal, st)
	}
	target := names("m", st.Masters)
	if len(st.Slots) > 0 {
		target = names("c", st.Slots) + "|" + target
	}
	masters := n.env.Backend().Masters()
	switch st.Fault {
	case generator.Pause:
		var paused []int
		for _, i := range st.Masters {
			if e := masters[i].Pause(ctx); e != nil {
				err = errors.Join(err, e)
				continue
			}
			paused = append(paused, i)
		}
		n.rec.Nemesis(target, st.Fault+" start")
		n.counts[st.Fault]++
		sleep(ctx, st.Hold)
		n.rec.Nemesis(target, st.Fault+" stop")
		for _, i := range paused {
			err = errors.Join(err, masters[i].Resume(heal))
		}
	case generator.Kill:
		var killed []int
		for _, i := range st.Masters {
			if e := masters[i].Kill(ctx); e != nil {
				err = errors.Join(err, e)
				continue
			}
			killed = append(killed, i)
			n.lost[i] = time.Now() // it starts empty
		}
		n.rec.Nemesis(target, st.Fault+" start")
		n.counts[st.Fault]++
		sleep(ctx, st.Hold)
		n.rec.Nemesis(target, st.Fault+" stop")
		for _, i := range killed {
			err = errors.Join(err, masters[i].Start(heal, backend.NoPersistence))
		}
	case generator.Partition, generator.Bridge, generator.Ring:
		parts := make([]string, len(st.Slots))
		for k, slot := range st.Slots {
			parts[k] = fmt.Sprintf("c%d-/-%s", slot, names("m", st.Cut[k]))
		}
		target = strings.Join(parts, " ")
		for k, slot := range st.Slots {
			n.env.SetCut(slot, st.Cut[k], true)
		}
		n.rec.Nemesis(target, st.Fault+" start")
		n.counts[st.Fault]++
		sleep(ctx, st.Hold)
		n.rec.Nemesis(target, st.Fault+" stop")
		for k, slot := range st.Slots {
			n.env.SetCut(slot, st.Cut[k], false)
		}
	case generator.NetPartition:
		// The master's own network is cut (Docker: iptables DROP in its
		// namespace): bytes in flight wait in TCP and arrive late, or the
		// client's call times out. The proxies are left alone.
		var cut []int
		for _, i := range st.Masters {
			if e := masters[i].Disconnect(ctx); e != nil {
				err = errors.Join(err, e)
				continue
			}
			cut = append(cut, i)
		}
		if len(cut) == 0 {
			return err
		}
		n.rec.Nemesis(names("m", cut), st.Fault+" start")
		n.counts[st.Fault]++
		sleep(ctx, st.Hold)
		n.rec.Nemesis(names("m", cut), st.Fault+" stop")
		for _, i := range cut {
			err = errors.Join(err, masters[i].Reconnect(heal))
		}
	case generator.SlowReplies:
		target += fmt.Sprintf(" +%v", st.Delay)
		for _, slot := range st.Slots {
			n.env.SetReplyDelay(slot, st.Masters, st.Delay)
		}
		n.rec.Nemesis(target, st.Fault+" start")
		n.counts[st.Fault]++
		sleep(ctx, st.Hold)
		n.rec.Nemesis(target, st.Fault+" stop")
		for _, slot := range st.Slots {
			n.env.SetReplyDelay(slot, st.Masters, 0)
		}
	case generator.SlowExtend:
		slot, ended, ok := n.awaitCandidate(ctx, st, SlowExtend, 0)
		if !ok {
			n.rec.Nemesis("", st.Fault+" skipped (no hold)")
			return nil
		}
		target = fmt.Sprintf("c%d|%s +%v", slot, names("m", st.Masters), st.Delay)
		n.env.SetReplyDelay(slot, st.Masters, st.Delay)
		n.rec.Nemesis(target, st.Fault+" start")
		n.counts[st.Fault]++
		n.env.Armed()
		select {
		case <-ended:
		case <-ctx.Done():
		}
		n.rec.Nemesis(target, st.Fault+" stop")
		n.env.SetReplyDelay(slot, st.Masters, 0)
	case generator.AcquirePause:
		err = n.acquirePause(ctx, st)
	case generator.StaleCache:
		n.staleCache(ctx, st)
	case generator.RestartLong, generator.RestartLongMerged:
		err = n.restartLong(ctx, heal, st)
	case generator.ClientPause:
		slot, ended, ok := n.awaitCandidate(ctx, st, PauseClient, 0)
		if !ok {
			n.rec.Nemesis("", st.Fault+" skipped (no hold)")
			return nil
		}
		n.rec.Nemesis("c"+strconv.Itoa(slot), st.Fault+" start")
		n.counts[st.Fault]++
		select {
		case <-ended:
		case <-ctx.Done():
		}
		n.rec.Nemesis("c"+strconv.Itoa(slot), st.Fault+" stop")
	default:
		return fmt.Errorf("unknown fault %q", st.Fault)
	}
	return err
}
