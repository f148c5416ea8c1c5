package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/jepsen-like/table"
)

func tableCmd() *cobra.Command {
	var out, backend string
	cmd := &cobra.Command{
		Use:   "table",
		Short: "Run every row of the docs' table with its committed seed, both columns; print it, or write it into --out between its markers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := table.Options{Backend: backend, Progress: func(r table.Row, c table.Column) {
				fmt.Fprintf(cmd.ErrOrStderr(), "running %q, %s (seed %d)\n", r.Fault, c.Name, r.Seed)
			}}
			cells := make([][]table.Cell, len(table.Rows))
			for i, row := range table.Rows {
				for _, col := range row.Cols() {
					c, err := table.RunCell(cmd.Context(), o, row, col)
					if err != nil {
						return err
					}
					cells[i] = append(cells[i], c)
				}
			}
			md := table.Markdown(table.Rows, cells)
			fmt.Fprint(cmd.OutOrStdout(), md)
			if out != "" {
				return table.Replace(out, md)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "markdown file whose table (between its markers) is replaced")
	cmd.Flags().StringVar(&backend, "backend", "local", "local or docker")
	return cmd
}
