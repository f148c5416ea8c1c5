package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/internal/redislog"
	"github.com/quorumlock/quorumlock/redlock"
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
	tolerance  int // WithDataLossTolerance's f
}

// Option configures Dial and FromEnv.
type Option func(*config) error

type config struct {
	dialTimeout, ioTimeout time.Duration
	poolSize               int
	longestTTL             time.Duration
	tolerance              int
	ping                   bool

	tls                       *tls.Config // WithTLS, cloned
	caFile, certFile, keyFile string      // WithCA, WithClientCert

	username, password string // WithCredentials
	credentials        bool
	envPassword        bool // WithEnvPassword

	logger *slog.Logger // WithLogger; nil: go-redis's lines are dropped
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

// WithDataLossTolerance tells Check that the masters' clients use
// redlock.WithDataLossTolerance(f): the quorum is ⌊(M+f)/2⌋ + 1 and no
// restart detection runs, so every reachable master counts. Default 0 (a
// majority, with restart detection). Dial refuses a negative f or one the
// masters cannot give (ErrInvalidArgument).
func WithDataLossTolerance(f int) Option {
	return func(c *config) error {
		if f < 0 {
			return fmt.Errorf("%w: data-loss tolerance %d is negative", ErrInvalidArgument, f)
		}
		c.tolerance = f
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
// unreadable certificate files, or a bad option. With WithPing, the masters
// are pinged in parallel and the failures joined (errors.Join), one line per
// master, each matching redlock.ErrUnreachable and naming its cause
// (connection refused, TLS, auth, DNS, timeout). Each client dials once per
// call (go-redis's DialerRetries is 1): a failed dial is reported at once,
// with its cause. No error quotes a password.
//
// The first Dial of the process installs go-redis's process-wide logger, once,
// so that the lines go-redis logs about these clients (a failed dial) go to
// the WithLogger logger instead of stderr, while every other go-redis client
// of the program logs as before; KeepRedisLogger opts out.
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
	if err := quorum.Check(len(urls), cfg.tolerance); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	redislog.Install() // once per process; see KeepRedisLogger
	c := &Cluster{longestTTL: cfg.longestTTL, tolerance: cfg.tolerance}
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
		// One dial attempt per call (go-redis's default is 5, with backoff):
		// a refused or TLS-failing master then costs one attempt, and the
		// caller sees its cause (refused, x509, ...) rather than its own
		// deadline passing during the backoff.
		o.DialerRetries = 1
		// No maintenance notifications (a Redis Enterprise feature): with
		// them on, go-redis resolves the host name inside NewClient (Dial
		// would block on a slow DNS) and sends CLIENT MAINT_NOTIFICATIONS on
		// every connection.
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		if cfg.poolSize > 0 {
			o.PoolSize = cfg.poolSize
		}
		rc := redis.NewClient(o)
		rc.AddHook(redislog.NewHook(cfg.logger))
		c.clients = append(c.clients, rc)
		c.urls = append(c.urls, m.display)
	}
	if cfg.ping {
		if err := c.ping(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}

// ping sends PING to every master in parallel and joins the failures, one
// line per master in URL order, each matching redlock.ErrUnreachable.
func (c *Cluster) ping(ctx context.Context) error {
	errs := make([]error, len(c.clients))
	var wg sync.WaitGroup
	for i, rc := range c.clients {
		wg.Go(func() {
			err := rc.Ping(ctx).Err()
			if err == nil {
				return
			}
			cause := probe.Cause(err)
			hint := ""
			if rc.Options().TLSConfig != nil && cause == "timeout" {
				hint = " (no answer to the TLS handshake: does this port speak TLS?)"
			}
			errs[i] = fmt.Errorf("master %d (%s): %w (%s): %w%s", i, c.urls[i], redlock.ErrUnreachable, cause, err, hint)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
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

// Close closes every client; errors are joined, one line per master.
func (c *Cluster) Close() error {
	var errs []error
	for i, rc := range c.clients {
		if err := rc.Close(); err != nil {
			errs = append(errs, fmt.Errorf("master %d (%s): close: %w", i, c.urls[i], err))
		}
	}
	return errors.Join(errs...)
}
