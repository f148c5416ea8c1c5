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
