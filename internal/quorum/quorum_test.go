package quorum

import "testing"

// The table of docs/safety.md: quorum and failures tolerated for M = 3, 5, 7,
// 9 and f = 0, 1, 2; and the intersection property the proof rests on.
func TestSizeTable(t *testing.T) {
	cases := []struct{ m, f, q, tolerated int }{
		{3, 0, 2, 1}, {3, 1, 3, 0},
		{5, 0, 3, 2}, {5, 1, 4, 1}, {5, 2, 4, 1},
		{7, 0, 4, 3}, {7, 1, 5, 2}, {7, 2, 5, 2}, {7, 3, 6, 1},
		{9, 0, 5, 4}, {9, 1, 6, 3}, {9, 2, 6, 3}, {9, 3, 7, 2},
	}
	for _, c := range cases {
		if got := Size(c.m, c.f); got != c.q {
			t.Errorf("Size(%d, %d) = %d, want %d", c.m, c.f, got, c.q)
		}
		if got := Tolerated(c.m, c.f); got != c.tolerated {
			t.Errorf("Tolerated(%d, %d) = %d, want %d", c.m, c.f, got, c.tolerated)
		}
	}
}

// Any two quorums share at least f+1 masters: 2q − m ≥ f + 1, for every
// usable pair.
func TestQuorumsShareMoreThanF(t *testing.T) {
	for m := 1; m <= 9; m++ {
		for f := 0; f < m; f++ {
			if Check(m, f) != nil {
				continue
			}
			if shared := 2*Size(m, f) - m; shared < f+1 {
				t.Errorf("m=%d f=%d: two quorums of %d share %d masters, want at least %d", m, f, Size(m, f), shared, f+1)
			}
		}
	}
}

func TestCheckRefusesUnusablePairs(t *testing.T) {
	for _, c := range []struct{ m, f int }{{5, -1}, {3, 3}, {1, 1}, {5, 5}, {2, 2}} {
		if Check(c.m, c.f) == nil {
			t.Errorf("Check(%d, %d) = nil, want an error", c.m, c.f)
		}
	}
	for _, c := range []struct{ m, f int }{{5, 0}, {5, 2}, {3, 1}, {3, 2}, {1, 0}, {9, 4}} {
		if err := Check(c.m, c.f); err != nil {
			t.Errorf("Check(%d, %d) = %v, want nil", c.m, c.f, err)
		}
	}
}

// The words are pinned: outside checks read them.
func TestTallyWords(t *testing.T) {
	if got, want := (Tally{Granted: 3, Counted: 2, Needed: 3, Answered: 4, Masters: 5}).String(), "3 granted, 2 count, 3 needed; 4 of 5 answered"; got != want {
		t.Errorf("Tally = %q, want %q", got, want)
	}
	if got, want := Standing(4, 5, 3), "4 of 5 masters count, 3 needed"; got != want {
		t.Errorf("Standing = %q, want %q", got, want)
	}
}
