package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func TestPasswordFromFileOrEnvironmentNeverShown(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	const pw = "s3cret-Pa55"
	for _, rc := range c.Clients(t) {
		if err := rc.ConfigSet(context.Background(), "requirepass", pw).Err(); err != nil {
			t.Fatal(err)
		}
	}
	urls := strings.Join(c.URLs(), ",")
	r := invoke(t, map[string]string{EnvMasters: urls}, "", "status")
	r.want(t, ExitNoQuorum, "status without the password")
	if !strings.Contains(r.out, "auth") {
		t.Fatalf("status without the password does not say auth:\n%s", r.out)
	}
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{EnvMasters: urls}, []string{"--password-file", file, "status"}},
		{map[string]string{EnvMasters: urls, EnvPassword: pw}, []string{"status", "-o", "json"}},
		{map[string]string{EnvMasters: urls, EnvPassword: pw}, []string{"doctor"}},
	} {
		r := invoke(t, tc.env, "", tc.args...)
		if tc.args[0] == "doctor" {
			r.want(t, ExitOK, "doctor with the password")
		} else {
			r.want(t, ExitOK, strings.Join(tc.args, " "))
		}
		if strings.Contains(r.out+r.errOut, pw) {
			t.Fatalf("%v printed the password:\n%s%s", tc.args, r.out, r.errOut)
		}
	}
	invoke(t, map[string]string{EnvMasters: urls}, "", "--password-file", filepath.Join(t.TempDir(), "missing"), "status").want(t, ExitUsage, "a missing password file")
}
