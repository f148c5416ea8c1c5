package cli

import (
	"encoding/json"
	"io"
	"text/tabwriter"
	"time"
)

// writeJSON prints v as one indented JSON document (the schemas are in
// docs/cli.md).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// ms converts a duration to JSON milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
