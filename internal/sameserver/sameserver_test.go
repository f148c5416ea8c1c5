package sameserver

import (
	"reflect"
	"testing"
)

func TestGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []ID
		want []Group
		text []string
	}{
		{"independent", []ID{{"a", "x"}, {"b", "y"}, {"c", "z"}}, nil, nil},
		{"unreachable masters match nothing", []ID{{}, {}, {"a", "x"}}, nil, nil},
		{"one server twice", []ID{{"a", "x"}, {"b", "y"}, {"a", "x"}},
			[]Group{{Masters: []int{0, 2}, By: SameRunID}},
			[]string{"masters 0 and 2 are one server (the same run_id)"}},
		{"a replica of another master", []ID{{"a", "x"}, {"b", "x"}, {"c", "z"}},
			[]Group{{Masters: []int{0, 1}, By: SameReplID}},
			[]string{"masters 0 and 1 share one replication history (the same master_replid: one replicates the other)"}},
		{"transitive, two groups", []ID{{"a", "x"}, {"b", "y"}, {"a", "x"}, {"c", "x"}, {"d", "w"}, {"b", "v"}},
			[]Group{{Masters: []int{0, 2, 3}, By: SameReplID}, {Masters: []int{1, 5}, By: SameRunID}},
			[]string{"masters 0, 2 and 3 share one replication history (the same master_replid: one replicates the other)", "masters 1 and 5 are one server (the same run_id)"}},
	} {
		got := Groups(tc.ids)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Groups = %+v, want %+v", tc.name, got, tc.want)
			continue
		}
		for i, g := range got {
			if g.String() != tc.text[i] {
				t.Errorf("%s: %q, want %q", tc.name, g.String(), tc.text[i])
			}
		}
	}
}
