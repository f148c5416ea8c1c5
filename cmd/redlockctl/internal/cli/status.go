package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
	"github.com/quorumlock/quorumlock/internal/probe"
)

func (a *app) newStatusCmd() *cobra.Command {
	var longest time.Duration
	cmd := &cobra.Command{
		Use:   "status [KEY...]",
		Short: "Masters' health and quorum, or who holds the given keys on which masters",
		Long: `Without keys, status probes every master and prints one line per master (reachable, latency,
version, persistence, clock offset, uptime, whether its yes counts by itself and why not) and what
a lock does now: how many masters count, how many are needed, and either the margin of failures
left, or that only a round every master grants can succeed (every master answers, too few count
by themselves), or that a lock fails. A server listed twice (the same run_id, or a master that
replicates another) counts once and makes the list refused. Exit 4 when a lock fails now.

With keys, it prints per key and master an owner id (a hash of the lock value, never the value),
the remaining TTL and the fencing counter; then a verdict per key: held (a majority agrees on one
owner), free, split (no majority; the stray minority keys are named) or unknown (fewer than a
majority answered: exit 4).`,
		Example: `  redlockctl status
  redlockctl status invoice:7 invoice:8 -o json`,
		RunE: func(cmd *cobra.Command, keys []string) error {
			if longest <= 0 {
				return usageError{fmt.Errorf("--longest-ttl %v: must be positive", longest)}
			}
			ctx, cancel := a.withTimeout(cmd.Context())
			defer cancel()
			c, err := a.connect(ctx, cluster.WithLongestTTL(longest))
			if err != nil {
				return err
			}
			defer c.Close()
			if len(keys) > 0 {
				reps := make([]inspect.KeyReport, len(keys))
				for i, k := range keys {
					reps[i] = inspect.Key(ctx, c.Clients(), c.URLs(), k, c.Quorum())
				}
				return a.printKeys(cmd.OutOrStdout(), reps)
			}
			st := c.Check(ctx)
			return a.printMasters(cmd.OutOrStdout(), st, summarizeCounters(readCounters(ctx, c.URLs(), c.Clients())))
		},
	}
	cmd.Flags().DurationVar(&longest, "longest-ttl", 30*time.Second, "longest lock TTL in use (sizes the restart quarantine reported)")
	return cmd
}

// masterJSON is one master in `status -o json`.
type masterJSON struct {
	Master           int     `json:"master"`
	URL              string  `json:"url"`
	Reachable        bool    `json:"reachable"`
	Cause            string  `json:"cause,omitempty"`
	LatencyMs        float64 `json:"latency_ms"`
	ClockOffsetMs    float64 `json:"clock_offset_ms"`
	Version          string  `json:"version"`
	UptimeS          int64   `json:"uptime_s"`
	AOF              bool    `json:"aof"`
	AppendFsync      string  `json:"appendfsync"`
	DELEX            bool    `json:"delex"`
	Votes            bool    `json:"votes"` // its yes counts by itself now
	Quarantined      bool    `json:"quarantined"`
	QuarantineReason string  `json:"quarantine_reason,omitempty"`
	QuarantineLeftS  float64 `json:"quarantine_left_s,omitempty"`
	Fresh            bool    `json:"fresh"`
	SameAs           []int   `json:"same_as,omitempty"` // the other entries that are this server (or its replication history)
}

// mastersJSON is `status -o json` without keys.
type mastersJSON struct {
	Masters []masterJSON `json:"masters"`
	Voting  int          `json:"voting"`  // masters that count by themselves, each server once
	Quorum  int          `json:"quorum"`  // needed
	Margin  int          `json:"margin"`  // voting masters that may still fail; negative: that many short
	Verdict string       `json:"verdict"` // ok, all-grant, no-quorum or same-server (see lockOutlook)
	// Counters is the fencing counter space over the reachable masters.
	Counters countersSummary `json:"counters"`
}

// countersSummary is the counter space in `status`: the recorded bucket
// count (0: none yet), the most bucket counters present on one master, and
// the per-key counters of an earlier version left on all of them.
type countersSummary struct {
	Buckets    int `json:"buckets"`
	PresentMax int `json:"present_max"`
	Legacy     int `json:"legacy"`
}

func summarizeCounters(ms []counterMaster) countersSummary {
	var s countersSummary
	for _, m := range ms {
		s.Buckets = max(s.Buckets, m.Buckets)
		s.PresentMax = max(s.PresentMax, m.Present)
		s.Legacy += m.Legacy
	}
	return s
}

// String is status's counter line.
func (s countersSummary) String() string {
	out := "fencing counters: no buckets recorded yet"
	if s.Buckets > 0 {
		out = fmt.Sprintf("fencing counters: %d buckets, at most %d present on a master", s.Buckets, s.PresentMax)
	}
	if s.Legacy > 0 {
		out += fmt.Sprintf("; %d per-key counters of an earlier version left (redlockctl counters --fold)", s.Legacy)
	}
	return out
}

func toMastersJSON(st []cluster.MasterStatus, o outlook, cs countersSummary) mastersJSON {
	out := mastersJSON{Voting: o.Counting, Quorum: o.Needed, Margin: o.Margin(), Verdict: o.Verdict, Counters: cs}
	for _, s := range st {
		m := masterJSON{Master: s.Master, URL: s.URL, Reachable: s.Reachable, SameAs: s.SameAs}
		if !s.Reachable {
			m.Cause = unreachableText(s.Err)
		} else {
			m.LatencyMs, m.ClockOffsetMs = ms(s.Latency), ms(s.ClockOffset)
			m.Version, m.UptimeS = s.Version, int64(s.Uptime.Seconds())
			m.AOF, m.AppendFsync, m.DELEX, m.Fresh = s.AOF, s.AppendFsync, s.DELEX, s.Fresh
			m.Quarantined, m.QuarantineReason = s.Quarantined, s.QuarantineReason
			m.QuarantineLeftS = s.QuarantineLeft.Seconds()
			m.Votes = counts(s)
		}
		out.Masters = append(out.Masters, m)
	}
	return out
}

func (a *app) printMasters(w io.Writer, st []cluster.MasterStatus, cs countersSummary) error {
	o := lockOutlook(st, a.g.tolerance)
	if a.g.json() {
		if err := writeJSON(w, toMastersJSON(st, o, cs)); err != nil {
			return err
		}
		return o.Err()
	}
	tw := table(w)
	fmt.Fprintln(tw, "#\tMASTER\tUP\tLATENCY\tCLOCK\tVERSION\tUPTIME\tAOF\tFSYNC\tDELEX\tCOUNTS")
	for _, s := range st {
		if !s.Reachable {
			fmt.Fprintf(tw, "%d\t%s\tno\t-\t-\t-\t-\t-\t-\t-\tno: %s\n", s.Master, s.URL, unreachableText(s.Err))
			continue
		}
		fsync := "-" // appendfsync means nothing without AOF
		if s.AOF {
			fsync = orDash(s.AppendFsync)
		}
		fmt.Fprintf(tw, "%d\t%s\tyes\t%v\t%+v\t%s\t%v\t%v\t%s\t%v\t%s\n", s.Master, s.URL,
			s.Latency.Round(time.Microsecond), s.ClockOffset.Round(time.Millisecond), s.Version,
			s.Uptime, s.AOF, fsync, s.DELEX, countsCell(st, s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, cs)
	fmt.Fprintln(w, o)
	return o.Err()
}

// unreachableText says why Check could not reach a master, the cause once:
// its error reads "unreachable (cause): what go-redis said".
func unreachableText(err error) string {
	if probe.Cause(err) == "timeout" {
		return err.Error() + " (no answer in time: paused, overloaded or partitioned?)"
	}
	return err.Error()
}

// countsCell says whether master s of st counts by itself now, and if not,
// why.
func countsCell(st []cluster.MasterStatus, s cluster.MasterStatus) string {
	switch {
	case repeated(s) && st[s.SameAs[0]].RunID == s.RunID:
		return fmt.Sprintf("no: the same server as master %d (counted once)", s.SameAs[0])
	case repeated(s):
		return fmt.Sprintf("no: shares master %d's replication history (counted once)", s.SameAs[0])
	case s.Quarantined: // a time quarantine's reason says when it ends
		return "no: quarantined: " + s.QuarantineReason
	case s.Fresh:
		return "yes (a fresh cluster: the first lock certifies it)"
	}
	return "yes"
}

// keysJSON is `status KEY... -o json`.
type keysJSON struct {
	Keys []inspect.KeyReport `json:"keys"`
}

func (a *app) printKeys(w io.Writer, reps []inspect.KeyReport) error {
	unknown := 0
	for _, r := range reps {
		if r.Verdict == inspect.VerdictUnknown {
			unknown++
		}
	}
	if a.g.json() {
		if err := writeJSON(w, keysJSON{Keys: reps}); err != nil {
			return err
		}
	} else {
		for i, r := range reps {
			if i > 0 {
				fmt.Fprintln(w)
			}
			tw := table(w)
			fmt.Fprintf(tw, "%s\tMASTER\tOWNER\tPTTL\tFENCE\n", r.Key)
			for _, m := range r.Masters {
				switch {
				case !m.Reachable:
					fmt.Fprintf(tw, "  %d\t%s\t%s\t\t\n", m.Master, m.URL, m.Cause)
				case m.Owner == "" && m.Cause != "":
					fmt.Fprintf(tw, "  %d\t%s\t%s\t\t%d\n", m.Master, m.URL, m.Cause, m.Fence)
				case m.Owner == "":
					fmt.Fprintf(tw, "  %d\t%s\t-\t-\t%d\n", m.Master, m.URL, m.Fence)
				default:
					fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\n", m.Master, m.URL, m.Owner, pttlString(m.PTTLms), m.Fence)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(w, "  verdict: %s\n", keyVerdictLine(r))
		}
	}
	if unknown > 0 {
		return codeError{ExitNoQuorum, fmt.Errorf("no quorum: fewer than %d masters answered for %d key(s)", reps[0].Quorum, unknown)}
	}
	return nil
}

func keyVerdictLine(r inspect.KeyReport) string {
	var b strings.Builder
	switch r.Verdict {
	case inspect.VerdictHeld:
		fmt.Fprintf(&b, "held by owner %s on %d of %d masters, %d needed; fencing counter %d", r.Owner, r.Holders, len(r.Masters), r.Quorum, r.Fence)
	case inspect.VerdictFree:
		fmt.Fprintf(&b, "free (%d of %d masters answered), fencing counter %d", r.Answered, len(r.Masters), r.Fence)
	case inspect.VerdictSplit:
		fmt.Fprintf(&b, "split: no owner holds a majority (largest group %d, %d needed)", r.Holders, r.Quorum)
	case inspect.VerdictUnknown:
		fmt.Fprintf(&b, "unknown: only %d of %d masters answered, %d needed", r.Answered, len(r.Masters), r.Quorum)
	}
	for _, s := range r.Strays {
		fmt.Fprintf(&b, "\n  stray: master %d holds a key of owner %s (%s) without a majority", s.Master, s.Owner, pttlString(s.PTTLms))
	}
	return b.String()
}

func pttlString(p int64) string {
	switch {
	case p == -1:
		return "no TTL (never expires: see `redlockctl audit`)"
	case p < 0:
		return "-"
	}
	return (time.Duration(p) * time.Millisecond).String()
}
