package semaphore

import (
	"context"
	"testing"
	"time"

	layout "github.com/quorumlock/quorumlock/internal/keys"

	"github.com/cenkalti/backoff/v4"
)

// Acquire is woken by the release, not by polling: with a backoff of an
// hour between attempts, a waiter on a full semaphore gets the place only
// because the release's notification woke it.
func TestAcquireWokenByRelease(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			_, m := realMasters(t, tc.masters)
			holder := newSem(t, m, "wake", 1, WithVariant(tc.variant))
			waiter := newSem(t, m, "wake", 1, WithVariant(tc.variant),
				WithRetry(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Hour) }))
			p := mustAcquire(t, holder, 1)[0]

			got := make(chan error, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			go func() {
				q, err := waiter.Acquire(ctx)
				if err == nil {
					err = q.Release(context.Background())
				}
				got <- err
			}()
			// Release only once the waiter's subscriptions are in place on
			// every master (a release before that is covered by backoff, which
			// this test has made an hour long).
			channel := keysFor("wake").channel
			if tc.masters > 1 {
				channel = layout.ChannelPrefix + slotKey("wake", p.Slot())
			}
			waitFor(t, "the waiter's subscriptions", func() bool {
				for _, rdb := range m {
					n, err := rdb.PubSubNumSub(context.Background(), channel).Result()
					if err != nil || n[channel] < 1 {
						return false
					}
				}
				return true
			})
			select {
			case err := <-got:
				t.Fatalf("Acquire returned while the semaphore was full: %v", err)
			default:
			}
			if err := p.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				if err != nil {
					t.Fatalf("woken Acquire: %v", err)
				}
			case <-ctx.Done():
				t.Fatal("the waiter was not woken by the release")
			}
		})
	}
}
