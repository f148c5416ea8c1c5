package otelobserver_test

import (
	"context"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/observe/otelobserver"
)

// A Client built with the observer (redlock.WithObserver)
// reports each operation; here one acquisition is fed by hand, and the span
// is read back from an in-memory recorder.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	obs := otelobserver.New(otelobserver.WithTracerProvider(tp))

	start := time.Now()
	obs.Observe(context.Background(), redlock.Event{
		Op: redlock.OpAcquire, Key: "invoice:7", Outcome: redlock.OutcomeOK,
		Start: start, Latency: 900 * time.Microsecond, Attempts: 1, Granted: 2, Quorum: 2, Token: 17,
		Masters: []redlock.MasterResult{
			{Master: 0, Latency: 400 * time.Microsecond},
			{Master: 1, Latency: 500 * time.Microsecond},
			{Master: 2, Err: redlock.ErrMasterTimeout},
		},
	})
	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.EndTime().Sub(s.StartTime()))
		for _, ev := range s.Events() {
			fmt.Println(" ", ev.Name, ev.Attributes[0].Value.AsInt64(), ev.Attributes[1].Value.AsString())
		}
	}
	// Output:
	// redlock.acquire 900µs
	//   redlock.master 0 ok
	//   redlock.master 1 ok
	//   redlock.master 2 timeout
}
