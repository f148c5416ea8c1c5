package background

import (
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGroupWaitsAndRefusesAfterStop(t *testing.T) {
	g := New()
	var ran atomic.Int32
	release := make(chan struct{})
	for range 3 {
		if !g.Go(func() { <-release; ran.Add(1) }) {
			t.Fatal("Go refused before Stop")
		}
	}
	if !g.Stop() || g.Stop() {
		t.Fatal("Stop must report true once, then false")
	}
	select {
	case <-g.Done():
	default:
		t.Fatal("Done open after Stop")
	}
	if g.Go(func() { ran.Add(100) }) {
		t.Fatal("Go ran after Stop")
	}
	close(release)
	g.Wait()
	if ran.Load() != 3 {
		t.Fatalf("%d goroutines ran to the end before Wait returned, want 3", ran.Load())
	}
}
