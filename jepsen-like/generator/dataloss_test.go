package generator

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

// A data-loss step hits 1 to f distinct masters of the holder's set S, which
// has as many masters as the quorum, with kinds from the configured list,
// and carries its fault model; the same seed gives the same plan, and a
// few steps deal every kind.
func TestGenerateDataLoss(t *testing.T) {
	cfg := Config{Nemeses: []string{DataLoss}, Masters: 7, Clients: 3, Duration: time.Minute, TTL: time.Second,
		Seed: 5, Quorum: 5, LossMasters: 2}
	a, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Generate(cfg); !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	kinds := map[string]int{}
	sizes := map[int]int{}
	for _, st := range a.Steps {
		if len(st.Majority) != 5 {
			t.Fatalf("S = %v: want the quorum, 5 masters", st.Majority)
		}
		if len(st.Masters) < 1 || len(st.Masters) > 2 || len(st.Kinds) != len(st.Masters) || len(st.Offsets) != len(st.Masters) {
			t.Fatalf("step %+v: want 1 or 2 masters, a kind and an offset each", st)
		}
		for _, m := range st.Masters {
			if !slices.Contains(st.Majority, m) {
				t.Fatalf("step %+v: m%d is not in S", st, m)
			}
		}
		if len(st.Masters) == 2 && st.Masters[0] == st.Masters[1] {
			t.Fatalf("step %+v: the same master twice", st)
		}
		if st.MaxLost != 2 || st.Window != LossWindow(time.Second) {
			t.Fatalf("step %+v: fault model %d in %v", st, st.MaxLost, st.Window)
		}
		sizes[len(st.Masters)]++
		for _, k := range st.Kinds {
			kinds[k]++
		}
	}
	for _, k := range LossKinds {
		if kinds[k] == 0 {
			t.Errorf("%s never dealt in a minute: %v", k, kinds)
		}
	}
	if sizes[1] == 0 || sizes[2] == 0 {
		t.Errorf("steps by size %v: want steps of one and of two masters", sizes)
	}
	cfg.LossKinds = []string{LossFlush, LossFailover}
	c, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Steps {
		for _, k := range st.Kinds {
			if k != LossFlush && k != LossFailover {
				t.Fatalf("kind %s outside the configured list", k)
			}
		}
	}
	for _, bad := range []Config{
		{Quorum: 2}, {Quorum: 8}, {LossMasters: 6, Quorum: 5}, {LossMasters: -1}, {LossKinds: []string{"meteor"}}, {LossKinds: []string{}},
	} {
		bad.Nemeses, bad.Masters, bad.Clients, bad.Duration, bad.TTL = []string{DataLoss}, 7, 3, time.Minute, time.Second
		if _, err := Generate(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Generate(%+v): %v, want ErrInvalidArgument", bad, err)
		}
	}
}
