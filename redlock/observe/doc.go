// Package observe holds the adapters of redlock.Observer, each in its own
// package so that redlock imports neither: promobserver (Prometheus
// counters and histograms) and otelobserver (OpenTelemetry spans).
package observe
