package otelobserver

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/quorumlock/quorumlock/redlock"
)

// TracerName is the instrumentation scope of the spans.
const TracerName = "github.com/quorumlock/quorumlock/redlock"

// Observer turns redlock events into spans. It is safe for concurrent use.
type Observer struct {
	tracer trace.Tracer
	keys   bool
}

// Option configures New.
type Option func(*Observer)

// WithTracerProvider sets the TracerProvider (default: otel.GetTracerProvider()
// at New).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *Observer) {
		if tp != nil {
			o.tracer = tp.Tracer(TracerName)
		}
	}
}

// WithoutKeys leaves the lock key out of the spans (default: attribute
// "redlock.key").
func WithoutKeys() Option { return func(o *Observer) { o.keys = false } }

// New builds an Observer. Nil options are ignored.
func New(opts ...Option) *Observer {
	o := &Observer{tracer: otel.GetTracerProvider().Tracer(TracerName), keys: true}
	for _, opt := range opts {
		if opt != nil {
			opt(o)
		}
	}
	return o
}

// Observe records e as a span, a child of the span in ctx. It implements
// redlock.Observer.
func (o *Observer) Observe(ctx context.Context, e redlock.Event) {
	attrs := []attribute.KeyValue{
		attribute.String("redlock.op", string(e.Op)),
		attribute.String("redlock.outcome", string(e.Outcome)),
	}
	if o.keys && e.Key != "" {
		attrs = append(attrs, attribute.String("redlock.key", e.Key))
	}
	if e.Quorum > 0 {
		attrs = append(attrs, attribute.Int("redlock.granted", e.Granted), attribute.Int("redlock.quorum", e.Quorum))
	}
	if e.Attempts > 0 {
		attrs = append(attrs, attribute.Int("redlock.attempts", e.Attempts))
	}
	if e.Token > 0 {
		attrs = append(attrs, attribute.Int64("redlock.token", int64(e.Token))) // tokens stay below 2^53
	}
	if !e.ValidUntil.IsZero() {
		attrs = append(attrs, attribute.String("redlock.valid_until", e.ValidUntil.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")))
	}
	if e.AutoExtend {
		attrs = append(attrs, attribute.Bool("redlock.auto_extend", true))
	}
	if e.Reason != "" {
		attrs = append(attrs, attribute.String("redlock.reason", e.Reason))
	}
	start := []trace.SpanStartOption{trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindClient)}
	if !e.Start.IsZero() {
		start = append(start, trace.WithTimestamp(e.Start))
	}
	_, span := o.tracer.Start(ctx, "redlock."+string(e.Op), start...)
	for _, m := range e.Masters {
		mattrs := []attribute.KeyValue{
			attribute.Int("redlock.master", m.Master),
			attribute.String("redlock.master.result", m.Kind()),
		}
		if m.Addr != "" {
			mattrs = append(mattrs, attribute.String("redlock.master.addr", m.Addr))
		}
		if m.Err != nil {
			mattrs = append(mattrs, attribute.String("redlock.master.error", m.Err.Error()))
		}
		ev := []trace.EventOption{trace.WithAttributes(mattrs...)}
		if !e.Start.IsZero() && m.Latency > 0 {
			ev = append(ev, trace.WithTimestamp(e.Start.Add(m.Latency)))
		}
		span.AddEvent("redlock.master", ev...)
	}
	switch e.Outcome {
	case redlock.OutcomeOK, redlock.OutcomeNotAcquired, redlock.OutcomeEntered, redlock.OutcomeLeft:
		// Normal answers: a lock held by someone else is not an error.
	default:
		msg := string(e.Outcome)
		if e.Err != nil {
			msg = e.Err.Error()
			span.RecordError(e.Err)
		}
		span.SetStatus(codes.Error, msg)
	}
	var end []trace.SpanEndOption
	if !e.Start.IsZero() {
		end = append(end, trace.WithTimestamp(e.Start.Add(e.Latency)))
	}
	span.End(end...)
}

var _ redlock.Observer = (*Observer)(nil)
