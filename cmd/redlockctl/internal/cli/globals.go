package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
)

// Environment variables redlockctl reads.
const (
	EnvMasters  = cluster.EnvMasters // comma-separated master URLs
	EnvPassword = "REDLOCK_PASSWORD" // password for masters whose URL has none
)

// DefaultTimeout is --timeout's default.
const DefaultTimeout = 2 * time.Second

// globals are the flags every command shares.
type globals struct {
	masters      string
	passwordFile string
	timeout      time.Duration
	output       string
	tlsCA        string
	tlsCert      string
	tlsKey       string
	tolerance    int
}

func (g *globals) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&g.masters, "masters", "", "comma-separated redis:// or rediss:// master URLs (default $"+EnvMasters+")")
	f.StringVar(&g.passwordFile, "password-file", "", "file holding the masters' password (default $"+EnvPassword+"); never pass a password on the command line")
	f.DurationVar(&g.timeout, "timeout", DefaultTimeout, "time allowed for each round trip to the masters, and for read-only commands as a whole (> 0)")
	f.StringVarP(&g.output, "output", "o", "table", "output format: table or json")
	f.StringVar(&g.tlsCA, "tls-ca", "", "PEM file of the CA certificates rediss:// masters are checked against (default: the system's)")
	f.StringVar(&g.tlsCert, "tls-cert", "", "PEM file of the client certificate for rediss:// masters that require one (with --tls-key)")
	f.StringVar(&g.tlsKey, "tls-key", "", "PEM file of the client certificate's private key (with --tls-cert)")
	f.IntVar(&g.tolerance, "data-loss-tolerance", 0, "the f of redlock.WithDataLossTolerance the masters' clients use: a quorum of (M+f)/2+1 and no restart detection (0: a majority, with restart detection)")
}

// pathFlags are the string flags whose empty value means "not given", and
// what they fall back to: given explicitly empty (an unset shell variable,
// say), they are a usage error rather than a silent fallback.
func (g *globals) pathFlags() []struct{ name, value, fallback string } {
	return []struct{ name, value, fallback string }{
		{"masters", strings.Trim(g.masters, ", \t"), " to read $" + EnvMasters},
		{"password-file", g.passwordFile, " to read $" + EnvPassword},
		{"tls-ca", g.tlsCA, ""},
		{"tls-cert", g.tlsCert, ""},
		{"tls-key", g.tlsKey, ""},
	}
}

// validate checks the global flags; set reports whether a flag was given.
func (g *globals) validate(set func(name string) bool) error {
	for _, f := range g.pathFlags() {
		if set(f.name) && strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("--%s is empty: give a value, or leave the flag out%s", f.name, f.fallback)
		}
	}
	if g.timeout <= 0 {
		return fmt.Errorf("--timeout %v: must be positive", g.timeout)
	}
	if g.output != "table" && g.output != "json" {
		return fmt.Errorf("-o %q: must be table or json", g.output)
	}
	if (g.tlsCert == "") != (g.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if g.tolerance < 0 {
		return fmt.Errorf("--data-loss-tolerance %d: must be 0 or more", g.tolerance)
	}
	return nil
}

// tlsOptions are the cluster options of the --tls-* flags.
func (g *globals) tlsOptions() []cluster.Option {
	var opts []cluster.Option
	if g.tlsCA != "" {
		opts = append(opts, cluster.WithCA(g.tlsCA))
	}
	if g.tlsCert != "" {
		opts = append(opts, cluster.WithClientCert(g.tlsCert, g.tlsKey))
	}
	return opts
}

func (g *globals) json() bool { return g.output == "json" }

// masterURLs reads the master list and applies the password to every URL
// that carries none.
func (a *app) masterURLs() ([]string, error) {
	raw := a.g.masters
	from := "--masters"
	if strings.TrimSpace(raw) == "" {
		raw, from = a.env.Getenv(EnvMasters), EnvMasters
	}
	var urls []string
	for _, u := range strings.Split(raw, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return nil, usageError{fmt.Errorf("no masters: set --masters or %s (e.g. %s=redis://h1:6379,redis://h2:6379,redis://h3:6379)", EnvMasters, EnvMasters)}
	}
	pw, err := a.password()
	if err != nil {
		return nil, err
	}
	for i, u := range urls {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "redis" && p.Scheme != "rediss") || p.Host == "" {
			return nil, usageError{fmt.Errorf("%s: master %d is not a redis:// or rediss:// URL", from, i)}
		}
		_, has := p.User.Password()
		if has && from == "--masters" {
			return nil, usageError{fmt.Errorf("--masters: master %d carries a password: a password on the command line leaks through ps and shell history; use --password-file or %s", i, EnvPassword)}
		}
		if pw != "" && !has {
			p.User = url.UserPassword(p.User.Username(), pw)
			urls[i] = p.String()
		}
	}
	return urls, nil
}

// password reads --password-file, else REDLOCK_PASSWORD; "" when neither.
func (a *app) password() (string, error) {
	if a.g.passwordFile != "" {
		b, err := os.ReadFile(a.g.passwordFile)
		if err != nil {
			return "", usageError{fmt.Errorf("--password-file: %w", err)}
		}
		pw := strings.TrimRight(string(b), "\r\n")
		if pw == "" {
			return "", usageError{fmt.Errorf("--password-file %s is empty", a.g.passwordFile)}
		}
		return pw, nil
	}
	return a.env.Getenv(EnvPassword), nil
}

// connect dials the masters (no I/O yet): every round trip is bounded by
// --timeout, and go-redis never retries a command on its own.
func (a *app) connect(ctx context.Context, opts ...cluster.Option) (*cluster.Cluster, error) {
	urls, err := a.masterURLs()
	if err != nil {
		return nil, err
	}
	base := append([]cluster.Option{cluster.WithTimeouts(a.g.timeout, a.g.timeout), cluster.WithDataLossTolerance(a.g.tolerance)}, a.g.tlsOptions()...)
	c, err := cluster.Dial(ctx, urls, append(base, opts...)...)
	if err != nil {
		if errors.Is(err, cluster.ErrInvalidArgument) {
			return nil, usageError{err}
		}
		return nil, err
	}
	return c, nil
}

// withTimeout bounds a read-only command as a whole by --timeout.
func (a *app) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.g.timeout)
}
