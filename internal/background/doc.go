// Package background owns goroutines that must all end when their owner
// closes: a Group starts them, refuses new ones once stopped, and waits for
// the running ones. The redlock Client uses one, and each semaphore one for
// its own work, so that Close can say exactly what it waits for. A
// semaphore permit's watcher is not in its semaphore's Group on purpose: a
// permit outlives its semaphore's Close (docs/semaphores.md), and its
// watcher ends with the permit (release, expiry or loss; goleak checks it
// in every package's tests).
package background
