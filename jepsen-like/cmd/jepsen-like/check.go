package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

func checkCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "check HISTORY",
		Short: "Run the checkers on a history file (JSON lines); exit 0 valid, 1 invalid, 2 unknown",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("check takes one HISTORY file, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return usageError{fmt.Errorf("-o %q: want text or json", output)}
			}
			events, err := history.ReadFile(args[0])
			if err != nil {
				return err
			}
			results := checker.Run(events)
			stats, err := statsOf(args[0])
			if err != nil {
				return err
			}
			if stats != nil {
				results = append(results, stats.Check(events))
			}
			verdict := checker.Overall(results)
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Verdict checker.Verdict  `json:"verdict"`
					Results []checker.Result `json:"results"`
				}{verdict, results}); err != nil {
					return err
				}
			} else {
				printVerdict(cmd, results)
			}
			if c := checker.ExitCode(verdict); c != 0 {
				return exitError{c}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}

// statsOf returns the stats checker of the run that wrote history, from
// the results.json next to it (nil when there is none: a history written
// by hand has no configuration to hold it to).
func statsOf(history string) (*checker.Stats, error) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(history), "results.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var run struct {
		Nemeses   []string `json:"nemeses"`
		NoFencing bool     `json:"no_fencing"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", filepath.Join(filepath.Dir(history), "results.json"), err)}
	}
	return &checker.Stats{Faults: run.Nemeses, Fencing: !run.NoFencing}, nil
}
