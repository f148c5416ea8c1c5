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
syntax), every string key it matches counts. Keys under "quorumlock:" are the library's own.

--fix-ttl D sets a TTL of D on every TTL-less lock key, on each master only where the key still
holds the value audited and still has no TTL. It asks for confirmation on stdin; --yes skips it.
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
			rep, err := inspect.Audit(cmd.Context(), c.Clients(), c.URLs(), inspect.AuditOptions{Match: match, Quorum: c.Quorum()})
			if err != nil {
				return err
			}
			out := auditJSON{Masters: rep.Masters, Findings: rep.Findings}
			noTTL := 0
			for _, f := range rep.Findings {
				if f.Kind == inspect.KindNoTTL {
					noTTL++
				}
			}
			if !a.g.json() {
				printAudit(cmd.OutOrStdout(), rep)
			}
			if fixTTL > 0 && noTTL > 0 {
				if !yes && !confirm(cmd.InOrStdin(), cmd.ErrOrStderr(), fmt.Sprintf("Set a TTL of %v on %d key(s) without one? [y/N] ", fixTTL, noTTL)) {
					fmt.Fprintln(cmd.ErrOrStderr(), "not confirmed: nothing changed (use --yes in scripts)")
				} else {
					out.Fixed, err = inspect.FixTTL(cmd.Context(), c.Clients(), rep, fixTTL)
					fmt.Fprintf(cmd.ErrOrStderr(), "set a TTL of %v on %d of %d key(s) without one\n", fixTTL, out.Fixed, noTTL)
					if err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "  %v\n", err)
					}
				}
			}
			for _, f := range rep.Findings {
				switch f.Severity {
				case inspect.SeverityError:
					out.Errors++
				case inspect.SeverityWarning:
					out.Warnings++
				}
			}
			out.Errors -= out.Fixed
			if a.g.json() {
				if err := writeJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
			}
			for _, m := range rep.Masters {
				if !m.Reachable {
					return codeError{ExitFailed, fmt.Errorf("audit incomplete: master %d (%s) %s", m.Master, m.URL, m.Cause)}
				}
			}
			if out.Errors > 0 {
				return codeError{ExitFailed, fmt.Errorf("audit: %d error finding(s)", out.Errors)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&match, "match", "", "SCAN MATCH pattern; every string key it matches counts as a lock")
	cmd.Flags().DurationVar(&fixTTL, "fix-ttl", 0, "set this TTL on lock keys that have none (asks first)")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask before --fix-ttl (for scripts)")
	return cmd
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
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%-7s  %s\n", strings.ToUpper(f.Severity), f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "         fix: %s\n", f.Fix)
		}
	}
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
