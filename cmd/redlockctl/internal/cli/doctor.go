package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/restart"
)

// doctorFinding is one check of one master.
type doctorFinding struct {
	Severity string `json:"severity"` // ok, info, warning, error
	Check    string `json:"check"`    // reachable, same-server, version, delex, persistence, maxmemory-policy, clock, uptime, counters, acl
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
}

type doctorMaster struct {
	Master    int             `json:"master"`
	URL       string          `json:"url"`
	Reachable bool            `json:"reachable"`
	Findings  []doctorFinding `json:"findings"`
}

// doctorJSON is doctor's -o json output.
type doctorJSON struct {
	Masters  []doctorMaster `json:"masters"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`

	outlook outlook // what a lock does now: the table's last line but one
}

// clockWarn is the clock offset doctor warns about.
const clockWarn = 500 * time.Millisecond

func (a *app) newDoctorCmd() *cobra.Command {
	var longest time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check every master's configuration for quorum locks; each finding with its fix",
		Long: `doctor checks each master: version and DELEX support, persistence (appendonly/appendfsync: what
restart quarantine will do with this master), maxmemory-policy (an evicting policy can drop lock
keys and fencing counters: an error), clock offset against the local clock (TIME), uptime and
restart quarantine, whether two entries are one server (the same run_id or master_replid), and the
ACL user in use; then what a lock does now. Each finding has a severity and the fix. Exit 1 if any
finding is an error.`,
		Example: `  redlockctl doctor
  redlockctl doctor -o json | jq '.masters[].findings[] | select(.severity=="error")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			st := c.Check(ctx)
			out := doctorJSON{Masters: make([]doctorMaster, len(st)), outlook: lockOutlook(st, a.g.tolerance)}
			var wg sync.WaitGroup
			for i, rc := range c.Clients() {
				wg.Go(func() { out.Masters[i] = diagnose(ctx, rc, st[i], longest) })
			}
			wg.Wait()
			for _, m := range out.Masters {
				for _, f := range m.Findings {
					switch f.Severity {
					case "error":
						out.Errors++
					case "warning":
						out.Warnings++
					}
				}
			}
			if a.g.json() {
				err = writeJSON(cmd.OutOrStdout(), out)
			} else {
				err = printDoctor(cmd.OutOrStdout(), out)
			}
			if err != nil {
				return err
			}
			if out.Errors > 0 {
				return codeError{ExitFailed, fmt.Errorf("doctor: %d error finding(s)", out.Errors)}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&longest, "longest-ttl", 30*time.Second, "longest lock TTL in use (sizes the restart quarantine reported)")
	return cmd
}

func diagnose(ctx context.Context, rc redis.UniversalClient, s cluster.MasterStatus, longest time.Duration) doctorMaster {
	m := doctorMaster{Master: s.Master, URL: s.URL, Reachable: s.Reachable}
	add := func(sev, check, msg, fix string) {
		m.Findings = append(m.Findings, doctorFinding{Severity: sev, Check: check, Message: msg, Fix: fix})
	}
	if !s.Reachable {
		add("error", "reachable", unreachableText(s.Err), unreachableFix(s.Err))
		return m
	}
	add("ok", "reachable", fmt.Sprintf("answers in %v", s.Latency.Round(time.Microsecond)), "")
	if s.Same != "" {
		add("error", "same-server", s.Same+": a lock counts each server once and refuses this list",
			"list each master once, and only masters that do not replicate each other (independent redis-server processes)")
	}
	add("info", "version", "Redis "+s.Version, "")
	if s.DELEX {
		add("ok", "delex", "has DELEX: releases use it", "")
	} else {
		add("info", "delex", "no DELEX (Redis < 8.4): releases run an owner-checked Lua script instead, equally safe", "")
	}
	switch {
	case s.Durable():
		add("ok", "persistence", "appendonly yes, appendfsync always: a restart loses nothing acknowledged; the master votes again at once", "")
	case s.AOF:
		add("warning", "persistence", fmt.Sprintf("appendonly yes, appendfsync %s: a crash of the host can lose the last writes, so after a restart this master sits out for %v (restart quarantine)", orDash(s.AppendFsync), longest),
			"CONFIG SET appendfsync always (and in redis.conf)")
	default:
		add("warning", "persistence", fmt.Sprintf("appendonly no: a restart loses every lock key and fencing counter, so after a restart this master sits out for %v (restart quarantine) and its counters are raised from the others before it votes", longest),
			"CONFIG SET appendonly yes; CONFIG SET appendfsync always (and in redis.conf)")
	}
	if s.AppendFsync == "" {
		add("warning", "persistence", "CONFIG GET is refused: persistence is unknown, so this master counts as not durable", "allow CONFIG GET to the lock user, or accept quarantine after restarts")
	}
	if pol, err := rc.ConfigGet(ctx, "maxmemory-policy").Result(); err != nil || pol["maxmemory-policy"] == "" {
		add("warning", "maxmemory-policy", "cannot read maxmemory-policy (CONFIG GET refused?)", "make sure it is noeviction")
	} else if p := pol["maxmemory-policy"]; p != "noeviction" {
		add("error", "maxmemory-policy", fmt.Sprintf("maxmemory-policy %s: under memory pressure Redis evicts keys, including lock keys (a lock silently lost) and fencing counters (tokens that go backwards)", p),
			"CONFIG SET maxmemory-policy noeviction (and in redis.conf); give the locks a Redis of their own")
	} else {
		add("ok", "maxmemory-policy", "noeviction: lock keys and fencing counters are never evicted", "")
	}
	off := s.ClockOffset
	if off < 0 {
		off = -off
	}
	if off > clockWarn {
		add("warning", "clock", fmt.Sprintf("clock offset %+v against this machine: key expiry follows the master's wall clock, and a clock that is this far off may also jump", s.ClockOffset.Round(time.Millisecond)),
			"run NTP (chrony) on the master and on this machine, slewing rather than stepping")
	} else {
		add("ok", "clock", fmt.Sprintf("clock offset %+v", s.ClockOffset.Round(time.Millisecond)), "")
	}
	switch {
	case s.Quarantined:
		add("warning", "uptime", fmt.Sprintf("up %v; a quorumlock client would not count its vote now: %s", s.Uptime, s.QuarantineReason),
			"wait for the quarantine to end; make the master durable to skip it after future restarts")
	default:
		// Uptime says when the process started, not that it restarted: a
		// restart that matters is a quarantine, above.
		add("ok", "uptime", fmt.Sprintf("up %v (run_id %s)", s.Uptime, s.RunID), "")
	}
	counterSpace(ctx, rc, add)
	user, err := rc.Do(ctx, "ACL", "WHOAMI").Text()
	if err != nil {
		add("info", "acl", "ACL WHOAMI refused: "+err.Error(), "")
		return m
	}
	flags, err := rc.Do(ctx, "ACL", "GETUSER", user).Result()
	if err == nil && user == "default" && hasNopass(flags) {
		add("warning", "acl", "connected as user default, which needs no password: any client that reaches the port can delete locks and fencing counters",
			"set requirepass or an ACL user with a password, and pass it with --password-file or REDLOCK_PASSWORD")
	} else {
		add("ok", "acl", "connected as user "+user, "")
	}
	return m
}

// hasNopass finds "nopass" in ACL GETUSER's flags (RESP2 or RESP3 shape).
func hasNopass(v any) bool {
	var flags any
	switch x := v.(type) {
	case map[any]any:
		flags = x["flags"]
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			if x[i] == "flags" {
				flags = x[i+1]
			}
		}
	}
	fs, _ := flags.([]any)
	for _, f := range fs {
		if f == "nopass" {
			return true
		}
	}
	return false
}

// unreachableFix is the fix for a master Check could not reach, by cause.
func unreachableFix(err error) string {
	switch probe.Cause(err) {
	case "connection refused":
		return "check the address and port, and that redis-server runs there"
	case "timeout":
		return "check the network path and firewalls, and whether the master is paused or overloaded; a rediss:// URL at a plain port (or redis:// at a TLS port) times out too"
	case "TLS":
		return "check the TLS settings: the CA (--tls-ca or tls_ca=), the server name (tls_server_name=), the client certificate if the server asks for one (--tls-cert and --tls-key), and that the port speaks TLS (rediss://) or not (redis://)"
	case "auth":
		return "check the user and password (--password-file or " + EnvPassword + ", the user name in the URL) and the user's ACL rules"
	case "DNS":
		return "check the host name, and this machine's resolver"
	}
	return "check the address, the network and that redis-server runs"
}

func printDoctor(w io.Writer, out doctorJSON) error {
	for _, m := range out.Masters {
		fmt.Fprintf(w, "master %d (%s)\n", m.Master, m.URL)
		for _, f := range m.Findings {
			fmt.Fprintf(w, "  %-7s  %-16s  %s\n", strings.ToUpper(f.Severity), f.Check, f.Message)
			if f.Fix != "" {
				fmt.Fprintf(w, "  %-7s  %-16s  fix: %s\n", "", "", f.Fix)
			}
		}
	}
	fmt.Fprintln(w, out.outlook)
	_, err := fmt.Fprintf(w, "%d error(s), %d warning(s)\n", out.Errors, out.Warnings)
	return err
}

// counterSpace reports the master's fencing counters: bounded by the bucket
// count, with per-key counters of an earlier version left to fold.
func counterSpace(ctx context.Context, rc redis.UniversalClient, add func(sev, check, msg, fix string)) {
	cs, err := restart.ReadCounterSpace(ctx, rc)
	switch {
	case err != nil:
		add("warning", "counters", "cannot count the fencing counters: "+err.Error(), "allow GET, EXISTS and SCAN on quorumlock:* to this user")
	case cs.Legacy > 0:
		add("info", "counters", fmt.Sprintf("%d per-key fencing counters of an earlier version left (each is read at every lock of its key and holds memory for ever)", cs.Legacy),
			"redlockctl counters --fold --yes (safe while clients lock)")
	case cs.Buckets == 0:
		add("ok", "counters", "no fencing counters yet", "")
	default:
		add("ok", "counters", fmt.Sprintf("%d of %d fencing counter buckets present: at most %d counters, whatever the number of keys locked", cs.Present, cs.Buckets, cs.Buckets), "")
	}
}
