package retry

import (
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The documented defaults: the first wait is 10 ms ± 50 %, waits grow up to
// 500 ms ± 50 %, and the policy never stops by itself.
func TestDefaultGrowsToHalfASecondAndNeverStops(t *testing.T) {
	b := Default()
	first := b.NextBackOff()
	if first < 5*time.Millisecond || first > 15*time.Millisecond {
		t.Fatalf("first wait %v, want 10 ms ± 50 %%", first)
	}
	var d time.Duration
	for range 100 {
		d = b.NextBackOff()
		if d == backoff.Stop {
			t.Fatal("the default policy stopped")
		}
		if d > 750*time.Millisecond {
			t.Fatalf("wait %v above 500 ms + 50 %%", d)
		}
	}
	if d < 250*time.Millisecond {
		t.Fatalf("after 100 waits the wait is %v, want about 500 ms", d)
	}
}
