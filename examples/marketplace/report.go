package main

import (
	"fmt"
	"strings"
	"time"
)

func verdict(r Result) string {
	if r.Conservation != nil {
		return "NOT CONSERVED: " + r.Conservation.Error()
	}
	s := "conserved"
	if r.Errors > 0 {
		s += fmt.Sprintf(", %d errors (%s)", r.Errors, r.FirstError)
	}
	return s
}

func ms(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func num(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// table renders results as a markdown table.
func table(rows []Result) string {
	var b strings.Builder
	b.WriteString("| mode | listers x buyers | locks | window | listed | sold | retries | missed | purchase mean | p99 | listings+sales/s | conserved |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		locks := "–"
		if r.Mode != Watch {
			locks = fmt.Sprintf("%d master", r.LockMasters)
			if r.LockMasters > 1 {
				locks += "s"
			}
		}
		ok := "yes"
		if r.Conservation != nil {
			ok = "**no**: " + r.Conservation.Error()
		}
		if r.Errors > 0 {
			ok += fmt.Sprintf(" (%d errors)", r.Errors)
		}
		if r.Lost > 0 {
			ok += fmt.Sprintf(" (%d leases lost before the writes, not written)", r.Lost)
		}
		fmt.Fprintf(&b, "| %s | %dx%d | %s | %.1f s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Mode, r.Listers, r.Buyers, locks, r.Window.Seconds(), num(r.Listed), num(r.Sold), num(r.Retries), num(r.Missed),
			ms(r.Mean), ms(r.P99), num(int64(r.OpsPerSec())), ok)
	}
	return b.String()
}
