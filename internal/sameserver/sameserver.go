// Package sameserver finds the masters of a list that are not independent
// servers: one redis-server listed twice (the same run_id, under two
// addresses or database numbers) or two servers of one replication history
// (the same master_replid: one replicates the other, or both replicate a
// third). A quorum lock must count each server once; quorumlock refuses such
// a list (cluster.Check and redlockctl status and doctor report it).
package sameserver

import (
	"fmt"
	"strconv"
	"strings"
)

// ID is what identifies one master: INFO's run_id and master_replid. Empty
// fields (an unreachable master) match nothing.
type ID struct {
	RunID  string
	ReplID string
}

// Why two masters are grouped.
const (
	SameRunID  = "run_id"        // one process
	SameReplID = "master_replid" // one replication history
)

// Group is a set of masters (indexes in the list, ascending) that are one
// server or one replication history.
type Group struct {
	Masters []int
	By      string // SameRunID when every member has the same run_id, else SameReplID
}

// Groups returns the groups of two or more masters that share a run_id or
// a master_replid (transitively), in the order of their first master.
func Groups(ids []ID) []Group {
	parent := make([]int, len(ids))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	byRun, byRepl := map[string]int{}, map[string]int{}
	for i, id := range ids {
		if id.RunID != "" {
			if j, ok := byRun[id.RunID]; ok {
				union(i, j)
			} else {
				byRun[id.RunID] = i
			}
		}
		if id.ReplID != "" {
			if j, ok := byRepl[id.ReplID]; ok {
				union(i, j)
			} else {
				byRepl[id.ReplID] = i
			}
		}
	}
	members := map[int][]int{}
	var roots []int
	for i := range ids {
		r := find(i)
		if _, ok := members[r]; !ok {
			roots = append(roots, r)
		}
		members[r] = append(members[r], i)
	}
	var out []Group
	for _, r := range roots {
		ms := members[r]
		if len(ms) < 2 {
			continue
		}
		g := Group{Masters: ms, By: SameRunID}
		for _, m := range ms[1:] {
			if ids[m].RunID != ids[ms[0]].RunID {
				g.By = SameReplID
			}
		}
		out = append(out, g)
	}
	return out
}

// String says what the group is: "masters 0 and 1 are one server (the same
// run_id)", or "masters 0 and 2 share one replication history (the same
// master_replid: one replicates the other)".
func (g Group) String() string {
	if g.By == SameRunID {
		return fmt.Sprintf("%s are one server (the same run_id)", list(g.Masters))
	}
	return fmt.Sprintf("%s share one replication history (the same master_replid: one replicates the other)", list(g.Masters))
}

// list reads "masters 0 and 1", "masters 0, 1 and 3".
func list(ms []int) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = strconv.Itoa(m)
	}
	return "masters " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
