package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestDemoPasses(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, &out, Config{Increments: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("demo failed: %v\n%s", res.Failures, out.String())
	}
	for _, want := range []string{
		"21 lost updates",       // 8 workers, 3 rounds: 24 increments, 3 kept
		"B is still locked out", // the naive lock
		"finds lock:report without a TTL",
		"paused (a minority)", "TryLock refused after", "(the per-master timeout: 1s)", "late write (token",
		"on 0 masters once its TTL has passed", "RESULT: PASS",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDemoRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Masters: 2}, {Masters: 10}, {Workers: -1}, {TTL: time.Millisecond}} {
		if _, err := Run(context.Background(), &bytes.Buffer{}, cfg); err == nil {
			t.Errorf("Run(%+v) succeeded", cfg)
		}
	}
}
