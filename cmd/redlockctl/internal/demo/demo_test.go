package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/redlock"
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

// A key that a timed-out release left behind (here set by hand), with the
// masters' clocks standing still (the ticker stopped, as a starved goroutine
// would be): the last check still holds, because it drives the clocks past
// the TTL itself, and the demo says why the key was there.
func TestCleanupHoldsWithAKeyLeftBehind(t *testing.T) {
	ms, err := startMasters(5)
	if err != nil {
		t.Fatal(err)
	}
	defer ms.close()
	close(ms.stop)
	ms.ticker.Wait()
	var out bytes.Buffer
	d := &demo{cfg: Config{TTL: 2 * time.Second, Masters: 5}, out: &out, ms: ms}
	if err := d.cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	cs := ms.clients()
	d.conns = cs
	c, err := redlock.New(cs, redlock.WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	d.clients = []*redlock.Client{c}
	for _, s := range ms.servers {
		if err := s.Set(keys.Bucket(keys.BucketOf(lockKey, redlock.DefaultFenceBuckets)), "7"); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms.servers[2].Set(lockKey, "left-by-a-timed-out-release"); err != nil {
		t.Fatal(err)
	}
	ms.servers[2].SetTTL(lockKey, d.cfg.TTL)
	d.cleanup(context.Background())
	if len(d.failures) > 0 || !strings.Contains(out.String(), "1 master(s) still hold") || !strings.Contains(out.String(), "on 0 masters once its TTL has passed") {
		t.Fatalf("cleanup with a key left behind: failures %v\n%s", d.failures, out.String())
	}
}
