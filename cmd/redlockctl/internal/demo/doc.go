// Package demo runs quorumlock's demonstration on five embedded masters
// (miniredis, in process, each behind a pausable proxy): contending workers
// doing read-modify-write under the lock with fencing tokens, a paused
// minority, a lost majority, a stale holder fenced off, and a final check
// that no key is left behind. It needs nothing installed.
package demo
