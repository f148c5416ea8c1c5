package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// A flag given an empty value is a mistake (an unset shell variable, say),
// not a request for the default: --masters ” must not fall back to
// $REDLOCK_MASTERS, nor --password-file ” to $REDLOCK_PASSWORD.
func TestExplicitlyEmptyFlagsAreUsageErrors(t *testing.T) {
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	env := map[string]string{EnvMasters: s.URL()}
	invoke(t, env, "", "status").want(t, ExitOK, "status from REDLOCK_MASTERS")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--masters", ""}, "--masters is empty"},
		{[]string{"status", "--masters=", "-o", "json"}, "--masters is empty"},
		{[]string{"status", "--masters", " , "}, "--masters is empty"},
		{[]string{"status", "--password-file", ""}, "--password-file is empty"},
		{[]string{"status", "--tls-ca", ""}, "--tls-ca is empty"},
	} {
		r := invoke(t, env, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) || r.out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, r.code, r.out, r.errOut, tc.want)
		}
	}
}

// Issue 20: a required flag left out says so, rather than complaining about
// a value nobody typed ("--ttl 0s: must be positive", "--limit 0: must be
// at least 1"); a value given and wrong still gets the value's message.
func TestMissingRequiredFlagsSayRequired(t *testing.T) {
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	env := map[string]string{EnvMasters: s.URL()}
	const handle = "rlh1.eyJrZXkiOiJrIn0"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lock", "k"}, "--ttl is required"},
		{[]string{"extend", handle}, "--ttl is required"},
		{[]string{"run", "k", "--", "true"}, "--ttl is required"},
		{[]string{"sem", "status", "x"}, "--limit is required"},
		{[]string{"sem", "acquire", "x"}, "--limit is required"},
		{[]string{"sem", "release", "x", handle}, "--limit is required"},
		{[]string{"sem", "refresh", "x", handle}, "--limit is required"},
		{[]string{"lock", "k", "--ttl", "0"}, "--ttl 0s: must be positive"},
		{[]string{"run", "k", "--ttl", "-1s", "--", "true"}, "--ttl -1s: must be positive"},
		{[]string{"sem", "acquire", "x", "--limit", "0"}, "--limit 0: must be at least 1"},
		{[]string{"lock", "k", "--ttl", "1s", "--masters", ""}, "--masters is empty"},
	} {
		r := invoke(t, env, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) || r.out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, r.code, r.out, r.errOut, tc.want)
		}
		if strings.HasSuffix(tc.want, "required") && (strings.Contains(r.errOut, "must be positive") || strings.Contains(r.errOut, "at least 1")) {
			t.Errorf("%q: stderr speaks of a value nobody typed: %q", tc.args, r.errOut)
		}
	}
}
