// Package demo walks through why quorum locks and fencing tokens exist, on
// embedded masters (miniredis, in process, each behind a pausable proxy):
// the check-then-act race without a lock (lost updates counted), a naive
// SETNX lock stuck behind a crashed holder, the SETNX+EXPIRE crash window
// (and audit finding the TTL-less key), the quorum lock riding out a paused
// minority and refusing without a majority, a paused holder fenced off by
// its token, and a final check that no key is left behind. Each step says
// what happened and why, and prints its checks. It needs nothing installed.
package demo
