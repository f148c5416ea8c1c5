package generator

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestParseNemeses(t *testing.T) {
	got, err := ParseNemeses("pause, restart,pause,none")
	if err != nil || !slices.Equal(got, []string{Pause, Restart}) {
		t.Fatalf("ParseNemeses = %v, %v", got, err)
	}
	all, err := ParseNemeses("all")
	if err != nil || !slices.Equal(all, Names) {
		t.Fatalf("all = %v, %v", all, err)
	}
	if none, err := ParseNemeses("none"); err != nil || len(none) != 0 {
		t.Fatalf("none = %v, %v", none, err)
	}
	if _, err := ParseNemeses("pause,meteor"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unknown nemesis: %v, want ErrInvalidArgument", err)
	}
}

func TestGenerateIsSeeded(t *testing.T) {
	cfg := Config{Nemeses: Names, Masters: 5, Clients: 4, Duration: time.Minute, TTL: time.Second, Seed: 7}
	a, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	cfg.Seed = 8
	c, _ := Generate(cfg)
	if reflect.DeepEqual(a, c) {
		t.Fatal("two seeds gave the same schedule")
	}
	seen := map[string]bool{}
	for _, st := range a.Steps {
		seen[st.Fault] = true
		switch {
		case IsEpisode(st.Fault):
			if len(st.Majority) != 3 || !slices.Contains(st.Majority, st.Masters[0]) {
				t.Fatalf("episode %+v: the faulted master must be one of a bare majority", st)
			}
		case st.Fault == Pause || st.Fault == Kill || st.Fault == NetPartition:
			if len(st.Masters) > 2 {
				t.Fatalf("%s of %d masters: a majority without MajorityDown", st.Fault, len(st.Masters))
			}
		case st.Fault == Partition || st.Fault == Bridge || st.Fault == Ring:
			for _, cut := range st.Cut {
				if len(cut) != 2 {
					t.Fatalf("%s cuts a client from %v: each client must keep a majority", st.Fault, cut)
				}
			}
		}
	}
	for _, n := range Names {
		if !seen[n] {
			t.Errorf("%s never scheduled in a minute", n)
		}
	}
	if len(a.Lifetimes) != 4 || len(a.Lifetimes[0]) < 2 {
		t.Fatalf("lifetimes %v: clients must come and go", a.Lifetimes)
	}
}

func TestGenerateMajorityDownAndShortRuns(t *testing.T) {
	s, err := Generate(Config{Nemeses: []string{Pause, Kill}, Masters: 5, Clients: 2, Duration: 2 * time.Second, TTL: time.Second, MajorityDown: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) < 2 {
		t.Fatalf("%d steps: every named fault must run once however short the run", len(s.Steps))
	}
	for _, st := range s.Steps {
		if len(st.Masters) < 3 {
			t.Fatalf("%s of %v with MajorityDown", st.Fault, st.Masters)
		}
	}
	bad := []Config{
		{Masters: 2, Clients: 2, Duration: time.Minute, TTL: time.Second},
		{Masters: 5, Clients: 1, Duration: time.Minute, TTL: time.Second},
		{Masters: 5, Clients: 2, Duration: time.Minute},
		{Masters: 5, Clients: 2, Duration: time.Second, TTL: time.Second},
	}
	for _, c := range bad {
		if _, err := Generate(c); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Generate(%+v): %v, want ErrInvalidArgument", c, err)
		}
	}
}

// bridge and ring: every client keeps a bare majority; a bridge's two
// halves share exactly one master of five, which every client reaches; in
// a ring of four clients no master is reached by all of them, and
// neighbours share two masters.
func TestBridgeAndRing(t *testing.T) {
	reach := func(cut []int) map[int]bool {
		r := map[int]bool{}
		for i := range 5 {
			if !slices.Contains(cut, i) {
				r[i] = true
			}
		}
		return r
	}
	for _, name := range []string{Bridge, Ring} {
		s, err := Generate(Config{Nemeses: []string{name}, Masters: 5, Clients: 4, Duration: 10 * time.Second, TTL: time.Second, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		st := s.Steps[0]
		if st.Fault != name || len(st.Slots) != 4 || len(st.Cut) != 4 {
			t.Fatalf("%s step %+v", name, st)
		}
		everyone := map[int]int{}
		for _, cut := range st.Cut {
			if len(cut) != 2 {
				t.Fatalf("%s cuts a client from %v: want a bare majority left", name, cut)
			}
			for i := range reach(cut) {
				everyone[i]++
			}
		}
		shared := 0
		for _, n := range everyone {
			if n == 4 {
				shared++
			}
		}
		switch name {
		case Bridge:
			if shared != 1 || len(everyone) != 5 {
				t.Fatalf("bridge %v: %d masters reached by every client, want one bridge; %d reached at all", st.Cut, shared, len(everyone))
			}
		case Ring:
			if shared != 0 {
				t.Fatalf("ring %v: %d masters reached by every client, want none", st.Cut, shared)
			}
			for k := range 4 {
				a, b := reach(st.Cut[k]), reach(st.Cut[(k+1)%4])
				common := 0
				for i := range a {
					if b[i] {
						common++
					}
				}
				if k < 3 && common != 2 {
					t.Fatalf("ring %v: neighbours %d and %d share %d masters, want 2", st.Cut, k, k+1, common)
				}
			}
		}
	}
}
