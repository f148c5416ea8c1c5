package checker

import (
	"testing"
)

// Three processes holding k at once are three overlaps, each listed with
// both holds' events; a permit beside a permit is left to Semaphore.
func TestMutexListsEveryOverlap(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":30,"valid_until_ns":1000}`,
		`{"process":2,"type":"invoke","f":"acquire","key":"k","time_ns":40}`,
		`{"process":2,"type":"ok","f":"acquire","key":"k","token":3,"time_ns":50,"valid_until_ns":1000}`,
		`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":60}`,
		`{"process":0,"type":"ok","f":"release","key":"k","time_ns":70}`,
		// A later, separate overlap of p3 and p4, after the others ended.
		`{"process":3,"type":"invoke","f":"acquire","key":"k","time_ns":2000}`,
		`{"process":3,"type":"ok","f":"acquire","key":"k","token":4,"time_ns":2010,"valid_until_ns":3000}`,
		`{"process":4,"type":"invoke","f":"acquire","key":"k","time_ns":2020}`,
		`{"process":4,"type":"ok","f":"acquire","key":"k","token":5,"time_ns":2030,"valid_until_ns":3000}`,
		// Two permits of s at once: no overlap for mutex.
		`{"process":5,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":2040}`,
		`{"process":5,"type":"ok","f":"acquire","key":"s","value":"limit=2","token":1,"time_ns":2050,"valid_until_ns":3000}`,
		`{"process":6,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":2060}`,
		`{"process":6,"type":"ok","f":"acquire","key":"s","value":"limit=2","token":1,"time_ns":2070,"valid_until_ns":3000}`,
	)
	r := Mutex{}.Check(h)
	wantVerdict(t, r, Invalid, -1)
	type pair struct{ a, b int }
	want := []pair{{0, 1}, {0, 2}, {1, 2}, {3, 4}}
	if len(r.Overlaps) != len(want) {
		t.Fatalf("%d overlaps %+v, want %v", len(r.Overlaps), r.Overlaps, want)
	}
	for i, o := range r.Overlaps {
		if (pair{o.Processes[0], o.Processes[1]}) != want[i] || o.Key != "k" {
			t.Errorf("overlap %d: %+v, want processes %v of k", i, o, want[i])
		}
		if o.FromNS >= o.ToNS {
			t.Errorf("overlap %d: from %d not before to %d", i, o.FromNS, o.ToNS)
		}
		procs := map[int]bool{}
		for _, e := range o.Ops {
			procs[e.Process] = true
		}
		if len(procs) != 2 || !procs[o.Processes[0]] || !procs[o.Processes[1]] {
			t.Errorf("overlap %d: events %v are not both holds'", i, o.Ops)
		}
	}
	if r.Overlaps[0].ToNS != 60 { // p0 released at 60
		t.Errorf("p0 and p1 overlap until %d, want 60 (p0's release)", r.Overlaps[0].ToNS)
	}
	if got := Overlaps(Holds(h), 2); len(got) != 2 {
		t.Errorf("Overlaps with limit 2 gave %d", len(got))
	}
}
