package redlock

import "testing"

// Every combination of five masters' outcomes and of which masters vote by
// themselves, against an oracle that tries every way the masters still
// waited for could answer: the round holds exactly when the quorum rule is
// met now, fails exactly when no way of answering could meet it, and its
// cleanup set is exactly the masters that may hold a key of ours.
func TestDecideAgainstEveryCombination(t *testing.T) {
	const m, q = 5, 3
	all := []outcome{waiting, silent, yes, no, errorReply, transport, unsent}
	out := make([]outcome, m)
	votes := make([]bool, m)
	cases := 0
	var rec func(i int)
	rec = func(i int) {
		if i == m {
			for mask := 0; mask < 1<<m; mask++ {
				for j := range votes {
					votes[j] = mask&(1<<j) != 0
				}
				check(t, out, votes, q)
				cases++
			}
			return
		}
		for _, o := range all {
			out[i] = o
			rec(i + 1)
		}
	}
	rec(0)
	if cases != 537824 { // 7^5 outcome combinations × 2^5 vote masks
		t.Fatalf("%d cases", cases)
	}
}

// meets is the quorum rule, written out: q voting yeses, or every master yes.
func meets(out []outcome, votes []bool, q int) bool {
	counted, every := 0, true
	for i, o := range out {
		if o == yes && votes[i] {
			counted++
		}
		every = every && o == yes
	}
	return counted >= q || every
}

func check(t *testing.T, out []outcome, votes []bool, q int) {
	t.Helper()
	now := meets(out, votes, q)
	// Could some way of answering by the masters still waited for meet it?
	var open []int
	for i, o := range out {
		if o == waiting {
			open = append(open, i)
		}
	}
	possible := false
	try := append([]outcome(nil), out...)
	for mask := 0; mask < 1<<len(open) && !possible; mask++ {
		for k, i := range open {
			try[i] = no
			if mask&(1<<k) != 0 {
				try[i] = yes
			}
		}
		possible = meets(try, votes, q)
	}
	want := undecided
	switch {
	case now:
		want = held
	case !possible:
		want = failed
	}
	if got := decide(out, votes, q); got != want {
		t.Fatalf("decide(%v, votes %v) = %v, want %v", out, votes, got, want)
	}
	for i, o := range out {
		cleanup := o == yes || o == errorReply || o == transport || o == waiting || o == silent
		if o.mayHoldOurKey() != cleanup {
			t.Fatalf("master %d with outcome %v: in cleanup set = %v, want %v", i, o, o.mayHoldOurKey(), cleanup)
		}
		if o.settled() && (o == transport || o == waiting || o == silent) {
			t.Fatalf("outcome %v counted as settled: a SET may still be queued", o)
		}
	}
	if want == failed {
		kind := failureKind(out)
		refused := false
		for _, o := range out {
			refused = refused || o == no
		}
		if (kind == ErrNotAcquired) != refused {
			t.Fatalf("failure kind %v for %v", kind, out)
		}
	}
}
