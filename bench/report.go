package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes r as one JSON line.
func WriteJSON(w io.Writer, r Row) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// fmtUS formats a duration given in µs: "514 µs", "9.2 ms", "1.06 s".
func fmtUS(us float64) string {
	switch {
	case us == 0:
		return "–"
	case us < 1000:
		return fmt.Sprintf("%.0f µs", us)
	case us < 10_000:
		return fmt.Sprintf("%.1f ms", us/1e3)
	case us < 1_000_000:
		return fmt.Sprintf("%.0f ms", us/1e3)
	default:
		return fmt.Sprintf("%.2f s", us/1e6)
	}
}

func fmtRate(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	// thousands separators
	n := len(s)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (n-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtCPU(r Row) string {
	if r.Ops == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f + %.0f", r.CPUClientUS, r.CPUServersUS)
}

func fmtFailed(r Row) string {
	s := fmt.Sprint(r.Failed)
	if r.Ops == 0 && r.InFlight > 0 {
		s += fmt.Sprintf(", %d in flight at the end", r.InFlight)
	}
	if r.FirstError != "" {
		e := strings.Join(strings.Fields(r.FirstError), " ")
		if len(e) > 60 {
			e = e[:57] + "..."
		}
		s += " (" + strings.ReplaceAll(e, "|", "/") + ")"
	}
	return s
}

// Markdown renders rows as two tables: lock+unlock of private keys
// (healthy and with stalled masters), and the hot key.
func Markdown(rows []Row) string {
	var b strings.Builder
	var plain, hot []Row
	for _, r := range rows {
		if strings.HasPrefix(r.Scenario, "hotkey") {
			hot = append(hot, r)
		} else {
			plain = append(plain, r)
		}
	}
	if len(plain) > 0 {
		b.WriteString("| scenario | library | go-redis | lock+unlock/s | acquire p50 | p99 | max | CPU µs/op client + servers | failed |\n")
		b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---|\n")
		for _, r := range plain {
			if r.Skipped != "" {
				fmt.Fprintf(&b, "| %s | %s | %s | skipped: %s | | | | | |\n", r.Scenario, r.Library, r.GoRedis, r.Skipped)
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				r.Scenario, r.Library, r.GoRedis, fmtRate(r.OpsPerSec),
				fmtUS(r.AcqP50US), fmtUS(r.AcqP99US), fmtUS(r.AcqMaxUS), fmtCPU(r), fmtFailed(r))
		}
	}
	if len(hot) > 0 {
		if len(plain) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("| scenario | library | owner changes/s | acquisitions/s | wait p50 | p99 | max | share max/min | CPU µs/op client + servers | failed | overlaps |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
		for _, r := range hot {
			share := fmt.Sprintf("%.1f (%d–%d)", r.ShareMaxMin, r.ShareMin, r.ShareMax)
			if r.Starved > 0 {
				share = fmt.Sprintf("∞ (%d starved, max %d)", r.Starved, r.ShareMax)
			}
			if r.Clients > 1 {
				share += fmt.Sprintf("; per client %d–%d", r.ClientShareMin, r.ClientShareMax)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n",
				r.Scenario, r.Library, fmtRate(r.OwnerChangesPerSec), fmtRate(r.OpsPerSec),
				fmtUS(r.AcqP50US), fmtUS(r.AcqP99US), fmtUS(r.AcqMaxUS), share, fmtCPU(r), fmtFailed(r), r.Overlaps)
		}
	}
	return b.String()
}
