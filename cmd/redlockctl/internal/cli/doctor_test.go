package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// findings returns doctor's findings of check on master m.
func findings(t *testing.T, j doctorJSON, m int, check string) []doctorFinding {
	t.Helper()
	var out []doctorFinding
	for _, f := range j.Masters[m].Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("master %d: no %q finding in %+v", m, check, j.Masters[m].Findings)
	}
	return out
}

// A master that just started for the first time did not restart: doctor
// says how long it has been up, nothing more, when it counts.
func TestDoctorDoesNotCallAFirstStartARestart(t *testing.T) {
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	r := invoke(t, map[string]string{EnvMasters: s.URL()}, "", "doctor", "-o", "json")
	r.want(t, ExitOK, "doctor on a fresh durable master")
	f := findings(t, parse[doctorJSON](t, r), 0, "uptime")[0]
	if f.Severity != "ok" || strings.Contains(f.Message, "restart") || !strings.HasPrefix(f.Message, "up ") {
		t.Fatalf("uptime finding of a master that never restarted: %+v", f)
	}
}

// A TLS failure's fix is about TLS (CA, server name, client certificate,
// the port's protocol), not about passwords; the message says the cause once.
func TestDoctorFixForATLSFailure(t *testing.T) {
	certs, other := clustertest.NewCerts(t), clustertest.NewCerts(t)
	s := clustertest.StartServer(t, clustertest.AOFAlways, clustertest.WithTLS(certs, false))
	r := invoke(t, map[string]string{EnvMasters: s.URL()}, "", "doctor", "--tls-ca", other.CAFile, "-o", "json")
	r.want(t, ExitFailed, "doctor with the wrong CA")
	f := findings(t, parse[doctorJSON](t, r), 0, "reachable")[0]
	if f.Severity != "error" || !strings.Contains(f.Message, "unknown authority") || strings.Count(f.Message, "unreachable") != 1 ||
		!strings.Contains(f.Fix, "--tls-ca") || strings.Contains(f.Fix, "password") {
		t.Fatalf("reachable finding with the wrong CA: %+v", f)
	}
}

// doctor reports a server listed twice as an error on each entry, and ends
// with what a lock does now.
func TestDoctorReportsOneServerListedTwice(t *testing.T) {
	c := clustertest.Start(t, 2, clustertest.AOFAlways)
	a := c.Servers[0].URL()
	env := map[string]string{EnvMasters: strings.Join([]string{a, strings.Replace(a, "127.0.0.1", "localhost", 1), c.Servers[1].URL()}, ",")}
	r := invoke(t, env, "", "doctor", "-o", "json")
	r.want(t, ExitFailed, "doctor with one server listed twice")
	j := parse[doctorJSON](t, r)
	for _, m := range []int{0, 1} {
		f := findings(t, j, m, "same-server")[0]
		if f.Severity != "error" || f.Message != "masters 0 and 1 are one server (the same run_id): a lock counts each server once and refuses this list" || f.Fix == "" {
			t.Fatalf("master %d: %+v", m, f)
		}
	}
	if j.Errors != 2 {
		t.Fatalf("doctor: %d errors, want 2", j.Errors)
	}
	r = invoke(t, env, "", "doctor")
	if !strings.Contains(r.out, "2 of 3 masters count, 2 needed: a lock fails now: masters 0 and 1 are one server") {
		t.Fatalf("doctor does not end with what a lock does:\n%s", r.out)
	}
}
