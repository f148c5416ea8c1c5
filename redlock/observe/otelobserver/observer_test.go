package otelobserver

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/redlock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func recorder(t testing.TB) (*tracetest.SpanRecorder, *sdktrace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSpanPerOperationWithMasterEvents(t *testing.T) {
	rec, tp := recorder(t)
	o := New(WithTracerProvider(tp))
	// The caller's span is the parent.
	ctx, parent := tp.Tracer("test").Start(context.Background(), "handler")
	start := time.Now()
	o.Observe(ctx, redlock.Event{
		Op: redlock.OpAcquire, Key: "invoice:7", Outcome: redlock.OutcomeNoQuorum, Start: start, Latency: 5 * time.Millisecond,
		Attempts: 3, Granted: 1, Quorum: 2, Err: redlock.ErrNoQuorum,
		Masters: []redlock.MasterResult{{Master: 0, Addr: "a:1", Latency: time.Millisecond}, {Master: 1, Addr: "b:1", Err: redlock.ErrMasterTimeout}, {Master: 2, Err: redlock.ErrQuarantined}},
	})
	o.Observe(ctx, redlock.Event{Op: redlock.OpLost, Key: "invoice:7", Outcome: redlock.OutcomeLost, Start: start, Err: redlock.ErrLockLost})
	parent.End()
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	acq, lost := spans[0], spans[1]
	if acq.Name() != "redlock.acquire" || acq.Parent().SpanID() != parent.SpanContext().SpanID() || !acq.StartTime().Equal(start) || acq.EndTime().Sub(acq.StartTime()) != 5*time.Millisecond {
		t.Fatalf("acquire span: %s parent %v, %v..%v", acq.Name(), acq.Parent().SpanID(), acq.StartTime(), acq.EndTime())
	}
	a := attrs(acq.Attributes())
	if a["redlock.outcome"].AsString() != "no_quorum" || a["redlock.key"].AsString() != "invoice:7" || a["redlock.attempts"].AsInt64() != 3 || a["redlock.quorum"].AsInt64() != 2 {
		t.Fatalf("acquire attributes: %v", acq.Attributes())
	}
	if acq.Status().Code != codes.Error {
		t.Fatalf("a failed acquire's status: %v", acq.Status())
	}
	var results []string
	for _, ev := range acq.Events() {
		if ev.Name == "redlock.master" {
			results = append(results, attrs(ev.Attributes)["redlock.master.result"].AsString())
		}
	}
	if len(results) != 3 || results[0] != "ok" || results[1] != "timeout" || results[2] != "quarantined" {
		t.Fatalf("per-master events: %v", results)
	}
	if lost.Name() != "redlock.lost" || lost.Status().Code != codes.Error {
		t.Fatalf("lost span: %s %v", lost.Name(), lost.Status())
	}
}

func TestNotAcquiredIsNoErrorAndKeysCanBeLeftOut(t *testing.T) {
	rec, tp := recorder(t)
	o := New(WithTracerProvider(tp), WithoutKeys(), nil)
	o.Observe(context.Background(), redlock.Event{Op: redlock.OpAcquire, Key: "secret-ish:key", Outcome: redlock.OutcomeNotAcquired, Err: redlock.ErrNotAcquired})
	s := rec.Ended()[0]
	if s.Status().Code == codes.Error {
		t.Fatalf("not acquired marked as an error: %v", s.Status())
	}
	if _, ok := attrs(s.Attributes())["redlock.key"]; ok {
		t.Fatalf("WithoutKeys still records the key: %v", s.Attributes())
	}
}

// BenchmarkObserve measures a sampled, recorded span with three master
// events (no exporter).
func BenchmarkObserve(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	o := New(WithTracerProvider(tp))
	e := redlock.Event{Op: redlock.OpAcquire, Key: "k", Outcome: redlock.OutcomeOK, Start: time.Now(), Latency: time.Millisecond, Granted: 3, Quorum: 2,
		Masters: []redlock.MasterResult{{Master: 0}, {Master: 1}, {Master: 2}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(ctx, e)
	}
}
