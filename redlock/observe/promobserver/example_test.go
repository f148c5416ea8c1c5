package promobserver_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/observe/promobserver"
)

// A Client built with the observer (redlock.WithObserver) feeds
// it an Event per operation; here one acquisition is fed by hand.
func Example() {
	reg := prometheus.NewRegistry()
	obs, err := promobserver.New(reg)
	if err != nil {
		panic(err)
	}
	obs.Observe(context.Background(), redlock.Event{
		Op: redlock.OpAcquire, Key: "invoice:7", Outcome: redlock.OutcomeOK,
		Latency: 800 * time.Microsecond, Attempts: 1, Granted: 2, Quorum: 2,
		Masters: []redlock.MasterResult{{Master: 0}, {Master: 1}, {Master: 2, Err: redlock.ErrMasterTimeout}},
	})
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetType().String() != "COUNTER" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			fmt.Printf("%s{%s} %v\n", mf.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue())
		}
	}
	// Output:
	// quorumlock_redlock_master_results_total{master=0,op=acquire,result=ok} 1
	// quorumlock_redlock_master_results_total{master=1,op=acquire,result=ok} 1
	// quorumlock_redlock_master_results_total{master=2,op=acquire,result=timeout} 1
	// quorumlock_redlock_operations_total{op=acquire,outcome=ok} 1
}
