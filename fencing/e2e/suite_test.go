package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/pgstore"
	"github.com/quorumlock/quorumlock/fencing/redisstore"
	"github.com/quorumlock/quorumlock/internal/pgtest"
	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/suite"
)

// Fencing under faults, through the jepsen-like suite (one history, one
// nemesis, one set of checkers): redlock leases with the defaults on five
// redis-server masters paused, killed, restarted without persistence, and
// holders paused past their lease, writing through each fenced store. The
// tokens and fenced-register checkers must say valid, and the paused
// holders' late writes must have been rejected.
func TestFencingUnderFaults(t *testing.T) {
	stores := map[string]func(t *testing.T) fencing.Store{
		"memory": func(*testing.T) fencing.Store { return fencing.NewMemoryStore() },
		"redis": func(t *testing.T) fencing.Store {
			return redisstore.New(clustertest.StartServer(t, clustertest.NoPersistence).Client(t))
		},
		"postgres": func(t *testing.T) fencing.Store {
			s, err := pgstore.New(context.Background(), pgtest.Pool(t))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			res, err := suite.Run(context.Background(), suite.Config{
				Backend: suite.Local, Workload: "register", Nemeses: []string{"pause,kill,restart,client-pause"},
				Time: 4 * time.Second, Clients: 4, Seed: 21, Store: newStore(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
			for _, f := range []string{"pause", "kill", "restart", "client-pause"} {
				if res.Faults[f] == 0 {
					t.Errorf("%s never injected: %s", f, res.NemesisErrors)
				}
			}
			for _, r := range res.Results {
				if r.Verdict != checker.Valid {
					t.Errorf("%s: %s: %s; proof %v", r.Checker, r.Verdict, r.Explanation, r.Ops)
				}
			}
			rejected := 0
			for _, e := range res.Events {
				if e.F == history.Write && e.Type == history.Fail {
					rejected++
				}
			}
			if rejected == 0 {
				t.Error("no stale write was rejected: the paused holder never raced a newer one")
			}
		})
	}
}
