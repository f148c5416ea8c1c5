// Package retry holds the retry policy shared by redlock's Lock and the
// semaphores' Acquire: their safety net behind release notifications.
package retry
