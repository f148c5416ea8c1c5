package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
)

// auditJSON is audit's -o json output.
type auditJSON struct {
	Masters  []inspect.MasterScan `json:"masters"`
	Findings []inspect.Finding    `json:"findings"`
	Errors   int                  `json:"errors"`   // findings of severity error
	Warnings int                  `json:"warnings"` // findings of severity warning
	Fixed    int                  `json:"fixed"`    // keys given a TTL by --fix-ttl
}

func (a *app) newAuditCmd() *cobra.Command {
	var match string
	var fixTTL time.Duration
	var yes bool
	cmd := &cobra.Command{
		Use:   "audit [--match PATTERN] [--fix-ttl D] [--yes]",
		Short: "Find lock keys without a TTL, stray minority keys and orphan fencing counters",
		Long: `audit SCANs every master (never KEYS) and reports:
  error    a lock key without a TTL: it never expires, so a holder that died keeps it forever
  warning  a stray key: held by an owner on fewer than a majority of masters
  info     a fencing counter without a lock key (fine: counters never expire)

Without --match, a string key counts as a lock when its value is a quorumlock lock value, a
fencing counter exists for it, or its name contains "lock"; with --match PATTERN (SCAN MATCH
syntax), every string key it matches counts. Keys under "quorumlock:" and "quorumlock-sem:" are
the library's own (counters, token buckets, sync keys, semaphores) and never audited as locks.

Only a proven lock key without a TTL is an error: its value is a lock value of the library on a
quorum of masters (or the library's fencing counter exists for it). A key that only looks like a
lock (its name, --match) is a warning, and no fix touches it: it may be an application key.

--fix-ttl D sets a TTL of D on every proven lock key without one, on each master only where the
key still holds the value audited and still has no TTL. It asks for confirmation on stdin; --yes
skips it. The report printed (and the exit code) is the one from after the fix.
Exit 1 when an error finding remains.`,
		Example: `  redlockctl audit
  redlockctl audit --match 'lock:*' --fix-ttl 1m --yes -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("fix-ttl") {
				if err := positive("--fix-ttl", fixTTL); err != nil {
					return err
				}
				if fixTTL%time.Millisecond != 0 {
					return usageError{fmt.Errorf("--fix-ttl %v: must be a whole number of milliseconds", fixTTL)}
				}
			}
			if yes && fixTTL == 0 {
				return usageError{fmt.Errorf("--yes confirms --fix-ttl, which is not given")}
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			opts := inspect.AuditOptions{Match: match, Quorum: c.Quorum()}
			rep, err := inspect.Audit(cmd.Context(), c.Clients(), c.URLs(), opts)
			if err != nil {
				return err
			}
			fixable := 0
			for _, f := range rep.Findings {
				if f.Fixable() {
					fixable++
				}
			}
			fixed, shown := 0, false // shown: the table of rep is on stdout
			if fixTTL > 0 && fixable > 0 {
				ok := yes
				if !yes {
					// The report the question is about comes first.
					if !a.g.json() {
						printAudit(cmd.OutOrStdout(), rep)
						shown = true
					}
					ok = confirm(cmd.InOrStdin(), cmd.ErrOrStderr(), fmt.Sprintf("Set a TTL of %v on %d lock key(s) without one? [y/N] ", fixTTL, fixable))
					if !ok {
						fmt.Fprintln(cmd.ErrOrStderr(), "not confirmed: nothing changed (use --yes in scripts)")
					}
				}
				if ok {
					var ferr error
					fixed, ferr = inspect.FixTTL(cmd.Context(), c.Clients(), rep, fixTTL)
					fmt.Fprintf(cmd.ErrOrStderr(), "set a TTL of %v on %d of %d lock key(s) without one\n", fixTTL, fixed, fixable)
					if ferr != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "  %v\n", ferr)
					}
					// What is printed (and the exit) is the state after the fix.
					if rep, err = inspect.Audit(cmd.Context(), c.Clients(), c.URLs(), opts); err != nil {
						return err
					}
					if shown {
						fmt.Fprintln(cmd.OutOrStdout(), "\nafter the fix:")
						shown = false
					}
				}
			}
			switch {
			case a.g.json():
				out := auditJSON{Masters: rep.Masters, Findings: rep.Findings, Fixed: fixed}
				for _, f := range rep.Findings {
					switch f.Severity {
					case inspect.SeverityError:
						out.Errors++
					case inspect.SeverityWarning:
						out.Warnings++
					}
				}
				if err := writeJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
			case !shown:
				printAudit(cmd.OutOrStdout(), rep)
			}
			return auditExit(rep)
		},
	}
	cmd.Flags().StringVar(&match, "match", "", "SCAN MATCH pattern; every string key it matches counts as a lock (a guess: --fix-ttl touches only proven lock keys)")
	cmd.Flags().DurationVar(&fixTTL, "fix-ttl", 0, "set this TTL on proven quorumlock lock keys that have none (asks first)")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask before --fix-ttl (for scripts)")
	return cmd
}

// auditExit is audit's exit: 1 when a master was not audited or an error
// finding remains.
func auditExit(rep inspect.AuditReport) error {
	for _, m := range rep.Masters {
		if !m.Reachable {
			return codeError{ExitFailed, fmt.Errorf("audit incomplete: master %d (%s) %s", m.Master, m.URL, m.Cause)}
		}
	}
	if n := rep.Errors(); n > 0 {
		return codeError{ExitFailed, fmt.Errorf("audit: %d error finding(s)", n)}
	}
	return nil
}

func printAudit(w io.Writer, rep inspect.AuditReport) {
	for _, m := range rep.Masters {
		if m.Reachable {
			fmt.Fprintf(w, "master %d (%s): %d string keys scanned\n", m.Master, m.URL, m.Scanned)
		} else {
			fmt.Fprintf(w, "master %d (%s): not audited: %s\n", m.Master, m.URL, m.Cause)
		}
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	var counters []string
	for _, f := range rep.Findings {
		if f.Kind == inspect.KindCounterOnly {
			counters = append(counters, f.Key)
			continue
		}
		fmt.Fprintf(w, "%-7s  %s\n", strings.ToUpper(f.Severity), f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "         fix: %s\n", f.Fix)
		}
	}
	// Every key ever locked by an older client may leave one: said once.
	if len(counters) > 0 {
		fmt.Fprintf(w, "%-7s  %d fencing counter(s) without a lock key (%s): fine, counters never expire so that tokens keep growing (-o json lists them)\n",
			strings.ToUpper(inspect.SeverityInfo), len(counters), examples(counters, 3))
	}
}

// examples names the first n of keys, and how many more there are.
func examples(keys []string, n int) string {
	if len(keys) <= n {
		return strings.Join(keys, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(keys[:n], ", "), len(keys)-n)
}

// confirm asks question on w and reads a yes from r.
func confirm(r io.Reader, w io.Writer, question string) bool {
	fmt.Fprint(w, question)
	line, _ := bufio.NewReader(r).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
