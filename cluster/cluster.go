package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/quorumlock/quorumlock/internal/probe"
)

// EnvMasters is the environment variable FromEnv reads: a comma-separated
// list of redis:// or rediss:// URLs, one per independent master.
const EnvMasters = "REDLOCK_MASTERS"

// ErrInvalidArgument is returned (wrapped, with a message naming the problem)
// for an empty or malformed master list or an unusable option value.
var ErrInvalidArgument = errors.New("cluster: invalid argument")

// Cluster is a set of independent Redis masters and their go-redis clients.
type Cluster struct {
	urls       []string // with passwords removed, for display
	clients    []*redis.Client
	longestTTL time.Duration
}

// Option configures Dial and FromEnv.
type Option func(*config) error

type config struct {
	dialTimeout, ioTimeout time.Duration
	poolSize               int
	longestTTL             time.Duration
	ping                   bool

	tls                       *tls.Config // WithTLS, cloned
	caFile, certFile, keyFile string      // WithCA, WithClientCert

	username, password string // WithCredentials
	credentials        bool
	envPassword        bool // WithEnvPassword
}

// WithTimeouts sets the dial timeout and the read/write timeout of every
// client. Defaults: 1 s to dial, 500 ms to read or write. Both must be
// positive.
func WithTimeouts(dial, io time.Duration) Option {
	return func(c *config) error {
		if dial <= 0 || io <= 0 {
			return fmt.Errorf("%w: timeouts must be positive (dial %v, io %v)", ErrInvalidArgument, dial, io)
		}
		c.dialTimeout, c.ioTimeout = dial, io
		return nil
	}
}

// WithPoolSize sets each client's connection pool size. Default: go-redis's
// (10 per CPU).
func WithPoolSize(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: pool size %d is below 1", ErrInvalidArgument, n)
		}
		c.poolSize = n
		return nil
	}
}

// WithLongestTTL tells Check the longest lock TTL in use, which sizes the
// restart quarantine it reports. Default 30 s.
func WithLongestTTL(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: longest TTL %v is not positive", ErrInvalidArgument, d)
		}
		c.longestTTL = d
		return nil
	}
}

// WithPing makes Dial fail unless every master answers PING (default: Dial
// does no I/O, since a lock needs only a majority).
func WithPing() Option {
	return func(c *config) error { c.ping = true; return nil }
}

// Dial builds one go-redis client per URL (redis:// or rediss://, with
// optional user, password and database, go-redis's query parameters, and
// tls_ca, tls_cert, tls_key, tls_server_name on rediss:// URLs). Credentials
// missing from a URL come from WithCredentials or WithEnvPassword. It does no
// I/O unless WithPing is given. Errors match ErrInvalidArgument for an empty
// list, a malformed or duplicate URL, TLS settings on a redis:// URL,
// unreadable certificate files, or a bad option; with WithPing, a failed PING
// (refused, TLS handshake, WRONGPASS) is reported per master. No error
// quotes a password.
func Dial(ctx context.Context, urls []string, opts ...Option) (*Cluster, error) {
	cfg := config{dialTimeout: time.Second, ioTimeout: 500 * time.Millisecond, longestTTL: 30 * time.Second}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidArgument)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: no master URLs", ErrInvalidArgument)
	}
	c := &Cluster{longestTTL: cfg.longestTTL}
	seen := make(map[string]bool)
	for i, raw := range urls {
		m, err := cfg.parseMaster(i, raw)
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		if seen[m.id] {
			_ = c.Close()
			return nil, fmt.Errorf("%w: master %d: %s is listed twice", ErrInvalidArgument, i, m.id)
		}
		seen[m.id] = true
		o := m.opts
		o.ContextTimeoutEnabled = true
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = cfg.dialTimeout, cfg.ioTimeout, cfg.ioTimeout
		o.MaxRetries = -1 // the lock retries whole attempts; a command retried inside go-redis only delays
		// No maintenance notifications (a Redis Enterprise feature): with
		// them on, go-redis resolves the host name inside NewClient (Dial
		// would block on a slow DNS) and sends CLIENT MAINT_NOTIFICATIONS on
		// every connection.
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		if cfg.poolSize > 0 {
			o.PoolSize = cfg.poolSize
		}
		c.clients = append(c.clients, redis.NewClient(o))
		c.urls = append(c.urls, m.display)
	}
	if cfg.ping {
		var errs *multierror.Error
		for i, rc := range c.clients {
			if err := rc.Ping(ctx).Err(); err != nil {
				hint := ""
				if rc.Options().TLSConfig != nil && probe.Cause(err) == "timeout" {
					hint = " (no answer to the TLS handshake: does this port speak TLS?)"
				}
				errs = multierror.Append(errs, fmt.Errorf("master %d (%s): %w%s", i, c.urls[i], err, hint))
			}
		}
		if errs != nil {
			_ = c.Close()
			return nil, errs
		}
	}
	return c, nil
}

// FromEnv is Dial with the URLs in REDLOCK_MASTERS (comma-separated) and
// the password in REDLOCK_PASSWORD (WithEnvPassword) for URLs without one.
// It returns an error matching ErrInvalidArgument when REDLOCK_MASTERS is
// unset or empty.
func FromEnv(ctx context.Context, opts ...Option) (*Cluster, error) {
	v := os.Getenv(EnvMasters)
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("%w: %s is not set (e.g. %s=redis://h1:6379,redis://h2:6379,redis://h3:6379)", ErrInvalidArgument, EnvMasters, EnvMasters)
	}
	return Dial(ctx, splitMasters(v), append([]Option{WithEnvPassword()}, opts...)...)
}

// splitMasters splits a REDLOCK_MASTERS value at commas, dropping blanks.
func splitMasters(v string) []string {
	var urls []string
	for _, u := range strings.Split(v, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// Clients returns the masters' clients, in URL order, for redlock.New.
func (c *Cluster) Clients() []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(c.clients))
	for i, rc := range c.clients {
		out[i] = rc
	}
	return out
}

// URLs returns the masters' URLs with any password replaced by "xxxxx".
func (c *Cluster) URLs() []string { return append([]string(nil), c.urls...) }

// Close closes every client.
func (c *Cluster) Close() error {
	var errs *multierror.Error
	for _, rc := range c.clients {
		if err := rc.Close(); err != nil {
			errs = multierror.Append(errs, err)
		}
	}
	return errs.ErrorOrNil()
}
