package redlock

import "testing"

// fastPath against every combination of five masters' outcomes, votes and
// raises: one round is enough exactly when q masters that count by
// themselves granted and raised their counter to the proposal, or every
// master granted and raised (docs/fencing.md, "One-round fencing"). A
// master that granted without raising held a counter at or above the
// proposal; a raise by a master that does not count proves nothing, since
// its counter may have lost every earlier token: counted toward the q, a
// flushed master's raise makes a token at or below an earlier one (the
// spin model's BROKEN_FASTPATH, docs/fencing-model.md).
func TestFastPathAgainstEveryCombination(t *testing.T) {
	const m, q = 5, 3
	outs := []outcome{yes, no, waiting, errorReply} // only yes matters; the others stand for every non-yes
	out := make([]outcome, m)
	votes, raised := make([]bool, m), make([]bool, m)
	cases := 0
	var rec func(i int)
	rec = func(i int) {
		if i < m {
			for _, o := range outs {
				out[i] = o
				rec(i + 1)
			}
			return
		}
		for vm := 0; vm < 1<<m; vm++ {
			for rm := 0; rm < 1<<m; rm++ {
				counted, every := 0, true
				for j := range m {
					votes[j], raised[j] = vm&(1<<j) != 0, rm&(1<<j) != 0
					up := out[j] == yes && raised[j]
					every = every && up
					if up && votes[j] {
						counted++
					}
				}
				if want := counted >= q || every; fastPath(out, votes, raised, q) != want {
					t.Fatalf("fastPath(%v, votes %v, raised %v) = %v, want %v", out, votes, raised, !want, want)
				}
				cases++
			}
		}
	}
	rec(0)
	if cases != 1024*1024 { // 4^5 outcome combinations × 2^5 vote masks × 2^5 raise masks
		t.Fatalf("%d cases", cases)
	}
}
