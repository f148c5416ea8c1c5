// Package background owns goroutines that must all end when their owner
// closes: a Group starts them, refuses new ones once stopped, and waits for
// the running ones. The redlock Client and the semaphores use one each, so
// that Close can say exactly what it waits for.
package background
