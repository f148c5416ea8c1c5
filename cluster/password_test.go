package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// A recognisable password: none of what the library says may contain it,
// raw or URL-escaped, nor its distinctive core.
const (
	leakCore     = "Pw4Leak7Zq"
	leakPassword = "s3cr3t-" + leakCore + "-end"
)

func assertNoPassword(t *testing.T, what, text string) {
	t.Helper()
	for _, p := range []string{leakPassword, url.QueryEscape(leakPassword), leakCore} {
		if strings.Contains(text, p) {
			t.Errorf("%s shows the password: %s", what, text)
			return
		}
	}
}

func TestURLErrorsNeverShowThePassword(t *testing.T) {
	ctx := context.Background()
	pw := leakPassword
	for _, raw := range []string{
		"redis://u:" + pw + "@h:notaport",
		"redis://u:" + pw + "@h:6379/a/b",
		"redis://u:" + pw + "@h:6379/x",
		"redis://u:" + pw + "@h:6379/?bogus=1",
		"redis://u:" + pw + "@h:6379/?dial_timeout=soon",
		"redis://u:" + pw + "@h:6379/?tls_ca=/none",
		"http://u:" + pw + "@h:6379",
		"u:" + pw + "@h:6379",
		"redis://u:" + pw + "%zz@h:6379",
		"redis://u:" + pw + "/x@h:6379",
		"redis://u:" + pw + " space@h:6379",
		"redis://u:" + pw + "@[::1:6379",
		"rediss://u:" + pw + "@h:6379/?tls_cert=/none",
		"rediss://u:" + pw + "@h:6379/?tls_ca=/none",
		"\x7fredis://u:" + pw + "@h",
	} {
		_, err := Dial(ctx, []string{raw})
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Dial(%q) = %v; want ErrInvalidArgument", raw, err)
			continue
		}
		assertNoPassword(t, "Dial error", err.Error())
		assertNoPassword(t, "Dial error (%+v)", fmt.Sprintf("%+v", err))
	}
	// Duplicates and REDLOCK_MASTERS go through the same path.
	t.Setenv(EnvMasters, "redis://u:"+pw+"@h:1,redis://u:"+pw+"@h:1")
	_, err := FromEnv(ctx)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("duplicate masters: %v", err)
	}
	assertNoPassword(t, "FromEnv error", err.Error())
	c, err := Dial(ctx, []string{"redis://u:" + pw + "@h:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	assertNoPassword(t, "URLs", fmt.Sprint(c.URLs()))
	assertNoPassword(t, "a client", fmt.Sprint(c.Clients()))
}

// Every way of passing the password works, and a wrong one fails with an
// error (from Dial, Check and redlock) and logs that never show it.
func TestPasswordsNeverLeak(t *testing.T) {
	ctx := context.Background()
	rc := clustertest.Start(t, 3)
	line := docACLLine(t)
	const right = "the-right-password"
	var plain []string // URLs with the user name only
	for _, s := range rc.Servers {
		applyACL(t, s, line, right)
		plain = append(plain, "redis://quorumlock@"+s.Addr)
	}
	withPw := func(pw string) []string {
		var out []string
		for _, s := range rc.Servers {
			out = append(out, "redis://quorumlock:"+url.QueryEscape(pw)+"@"+s.Addr)
		}
		return out
	}

	// The right password, from the URL, WithCredentials, REDLOCK_PASSWORD.
	// In this order: the last case changes REDLOCK_PASSWORD (a map's random
	// order let it run first and fail the env cases now and then).
	t.Setenv(EnvPassword, right)
	for _, tc := range []struct {
		name string
		dial func() (*Cluster, error)
	}{
		{"URL", func() (*Cluster, error) { return Dial(ctx, withPw(right), WithPing()) }},
		{"WithCredentials", func() (*Cluster, error) { return Dial(ctx, plain, WithCredentials("quorumlock", right), WithPing()) }},
		{"WithEnvPassword", func() (*Cluster, error) { return Dial(ctx, plain, WithEnvPassword(), WithPing()) }},
		{"FromEnv", func() (*Cluster, error) {
			t.Setenv(EnvMasters, strings.Join(plain, ","))
			return FromEnv(ctx, WithPing())
		}},
		{"URL over the env", func() (*Cluster, error) {
			t.Setenv(EnvPassword, "wrong")
			return Dial(ctx, withPw(right), WithEnvPassword(), WithPing())
		}},
	} {
		c, err := tc.dial()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		_ = c.Close()
	}
	t.Setenv(EnvPassword, right)
	// Without WithEnvPassword, Dial does not read it: a URL with a user
	// name but no password logs in as no one (go-redis sends AUTH only with
	// a password), and the server's default user answers.
	c, err := Dial(ctx, plain[:1])
	if err != nil {
		t.Fatal(err)
	}
	if who, err := c.Clients()[0].Do(ctx, "ACL", "WHOAMI").Text(); err != nil || who != "default" {
		t.Errorf("Dial without WithEnvPassword: logged in as %q (%v); want the default user", who, err)
	}
	_ = c.Close()

	// The wrong password, recognisable, through every path.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Setenv(EnvPassword, leakPassword)
	t.Setenv(EnvMasters, strings.Join(plain, ","))
	paths := map[string]func() (*Cluster, error){
		"URL":             func() (*Cluster, error) { return Dial(ctx, withPw(leakPassword)) },
		"WithCredentials": func() (*Cluster, error) { return Dial(ctx, plain, WithCredentials("quorumlock", leakPassword)) },
		"FromEnv":         func() (*Cluster, error) { return FromEnv(ctx) },
	}
	for name, dial := range paths {
		c, err := dial()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		assertNoPassword(t, name+": URLs", fmt.Sprint(c.URLs()))
		for _, st := range c.Check(ctx) {
			if st.Reachable || !strings.Contains(st.Err.Error(), "WRONGPASS") {
				t.Errorf("%s: Check with a wrong password: %+v; want WRONGPASS", name, st)
			}
			assertNoPassword(t, name+": Check", fmt.Sprintf("%+v", st))
		}
		_ = c.Close()

		c, _ = dial()
		if name == "URL" {
			_, err = Dial(ctx, c.URLs(), WithPing()) // the displayed URLs carry no password that works
			if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
				t.Errorf("%s: the displayed URLs: %v; want WRONGPASS", name, err)
			}
		}
		locks, err := redlock.New(c.Clients(), redlock.WithLogger(logger), redlock.WithQuarantine(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = locks.Lock(tctx, "locks:a", time.Second)
		cancel()
		if err == nil {
			t.Fatalf("%s: Lock with a wrong password succeeded", name)
		}
		assertNoPassword(t, name+": Lock error", fmt.Sprintf("%v %+v", err, err))
		_, err = locks.TryLock(ctx, "locks:a", time.Second)
		if err == nil || !strings.Contains(err.Error(), "WRONGPASS") && !strings.Contains(err.Error(), "auth") {
			t.Errorf("%s: TryLock with a wrong password: %v; want it to say why", name, err)
		}
		assertNoPassword(t, name+": TryLock error", fmt.Sprint(err))
		_ = locks.Close()
		_ = c.Close()
	}
	// The right password with debug logs: a whole lock's life is logged
	// without it, nor the lock's value.
	c, err = Dial(ctx, withPw(right))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	locks, err := redlock.New(c.Clients(), redlock.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a Lock that keeps failing ends the test, not CI
	defer cancel()
	l, err := locks.Lock(lctx, "locks:a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if logs.Len() == 0 {
		t.Error("nothing was logged at debug level: the log check proves nothing")
	}
	assertNoPassword(t, "debug log", logs.String())
	if strings.Contains(logs.String(), right) {
		t.Errorf("debug log shows the right password")
	}
}
