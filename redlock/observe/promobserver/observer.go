package promobserver

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quorumlock/quorumlock/redlock"
)

// ErrInvalidArgument is returned (wrapped) for a nil registerer or option.
var ErrInvalidArgument = errors.New("promobserver: invalid argument")

// DefaultBuckets are the duration histogram's buckets, in seconds: from
// 250 µs (a lock on loopback) to 10 s (a Lock that waited).
var DefaultBuckets = []float64{0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// masterResults are the values of master_results_total's result label: every
// value redlock.MasterResult.Kind returns (TestMasterResultsHelpListsEveryResult
// reads them from its source).
var masterResults = []string{
	"ok", "held_by_other", "key_absent", "timeout", "not_waited_for", "busy",
	"quarantined", "unreachable", "reply_error", "canceled", "error",
}

// Observer records redlock events as Prometheus metrics. It is safe for
// concurrent use.
type Observer struct {
	keyLabel func(string) string // nil: no key label

	ops      *prometheus.CounterVec
	duration *prometheus.HistogramVec
	masters  *prometheus.CounterVec
	attempts *prometheus.HistogramVec
}

// Option configures New.
type Option func(*config) error

type config struct {
	namespace string
	buckets   []float64
	keyLabel  func(string) string
}

// WithNamespace replaces the metric namespace (default "quorumlock").
func WithNamespace(ns string) Option {
	return func(c *config) error { c.namespace = ns; return nil }
}

// WithBuckets replaces DefaultBuckets (seconds, increasing).
func WithBuckets(b []float64) Option {
	return func(c *config) error {
		if len(b) == 0 {
			return errors.Join(ErrInvalidArgument, errors.New("no buckets"))
		}
		c.buckets = append([]float64(nil), b...)
		return nil
	}
}

// WithKeyLabel adds a "key" label to the operation metrics, with the value
// class(key). class must map keys to a small, bounded set of values (for
// example the part before the first ':'), or the metrics' cardinality grows
// without bound. Default: no key label.
func WithKeyLabel(class func(key string) string) Option {
	return func(c *config) error {
		if class == nil {
			return errors.Join(ErrInvalidArgument, errors.New("nil key class"))
		}
		c.keyLabel = class
		return nil
	}
}

// New builds an Observer and registers its metrics with reg. It returns an
// error matching ErrInvalidArgument for a nil reg or option, or the
// registerer's error (e.g. the metrics are already registered).
func New(reg prometheus.Registerer, opts ...Option) (*Observer, error) {
	if reg == nil {
		return nil, errors.Join(ErrInvalidArgument, errors.New("nil registerer"))
	}
	cfg := config{namespace: "quorumlock", buckets: DefaultBuckets}
	for _, o := range opts {
		if o == nil {
			return nil, errors.Join(ErrInvalidArgument, errors.New("nil option"))
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	opLabels := []string{"op", "outcome"}
	if cfg.keyLabel != nil {
		opLabels = append(opLabels, "key")
	}
	o := &Observer{
		keyLabel: cfg.keyLabel,
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: cfg.namespace, Subsystem: "redlock", Name: "operations_total",
			Help: "Lock operations (acquire, extend, release), lost leases and quarantine changes, by outcome.",
		}, opLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: cfg.namespace, Subsystem: "redlock", Name: "operation_duration_seconds",
			Help: "Duration of lock operations, by outcome.", Buckets: cfg.buckets,
		}, opLabels),
		masters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: cfg.namespace, Subsystem: "redlock", Name: "master_results_total",
			Help: "Each master's part in lock operations, by result (redlock.MasterResult.Kind): " + strings.Join(masterResults, ", ") + ".",
		}, []string{"op", "master", "result"}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: cfg.namespace, Subsystem: "redlock", Name: "lock_attempts",
			Help: "Quorum rounds per acquire call.", Buckets: []float64{1, 2, 3, 5, 10, 20, 50, 100},
		}, []string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{o.ops, o.duration, o.masters, o.attempts} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Observe records e. It implements redlock.Observer.
func (o *Observer) Observe(_ context.Context, e redlock.Event) {
	labels := []string{string(e.Op), string(e.Outcome)}
	if o.keyLabel != nil {
		labels = append(labels, o.keyLabel(e.Key))
	}
	o.ops.WithLabelValues(labels...).Inc()
	if e.Op != redlock.OpLost && e.Op != redlock.OpQuarantine {
		o.duration.WithLabelValues(labels...).Observe(e.Latency.Seconds())
	}
	if e.Op == redlock.OpAcquire && e.Attempts > 0 {
		o.attempts.WithLabelValues(string(e.Outcome)).Observe(float64(e.Attempts))
	}
	for _, m := range e.Masters {
		o.masters.WithLabelValues(string(e.Op), strconv.Itoa(m.Master), m.Kind()).Inc()
	}
}

var _ redlock.Observer = (*Observer)(nil)
