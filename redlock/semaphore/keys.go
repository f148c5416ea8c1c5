package semaphore

import "strconv"

// KeyPrefix starts every key and channel of a semaphore. The name follows
// between braces, then a suffix that names the key's role. A semaphore named
// N keeps, on its master(s):
//
//	quorumlock-sem:{N}            Basic, Fair, Guarded: ZSET member → client time (ms)
//	                              Atomic (one master):  ZSET member → server TIME (ms)
//	quorumlock-sem:{N}:owner      Fair, Guarded: ZSET member → counter value
//	quorumlock-sem:{N}:counter    Fair, Guarded: the INCR counter
//	quorumlock-sem:{N}:guard      Guarded: the guard lock (a redlock key)
//	quorumlock-sem:{N}:tokens     Atomic (one master): HASH member → fencing token
//	quorumlock-sem:{N}:fence      Atomic (one master): the fencing counter
//	quorumlock-sem:{N}:limit      every variant: the limit its holders use
//	quorumlock-sem:{N}:slot:I     Atomic (several masters): slot I, a redlock key
//	                              (its counter is redlock.FencePrefix + that key)
//
// Releases publish on quorumlock-sem:{N}:released (one master) or on
// redlock.ChannelPrefix + the slot key (several masters).
//
// No two names share a key: the name is everything between the first "{"
// and the last "}", and no suffix holds a "}". (Before this layout, keys
// were the prefix, the name and the suffix, so that the semaphore "jobs"
// kept its owner ZSET where a semaphore named "jobs:owner" kept its
// holders.) The braces are also a Redis Cluster hash tag: for a name without
// braces, every key of one semaphore maps to the same cluster slot, as the
// one-master scripts, which touch several keys at once, need there.
const KeyPrefix = "quorumlock-sem:"

type keys struct {
	holders, owner, counter, guard, tokens, fence, limit, channel string
}

// base is the part of every key of name before its suffix.
func base(name string) string { return KeyPrefix + "{" + name + "}" }

func keysFor(name string) keys {
	b := base(name)
	return keys{
		holders: b,
		owner:   b + ":owner",
		counter: b + ":counter",
		guard:   b + ":guard",
		tokens:  b + ":tokens",
		fence:   b + ":fence",
		limit:   b + ":limit",
		channel: b + ":released",
	}
}

// LimitKey is the key that records, on each master, the limit a
// semaphore's holders use (see New); its value is the limit in decimal.
func LimitKey(name string) string { return keysFor(name).limit }

// SlotKey is the redlock lock key of slot i (0 ≤ i < limit) of a semaphore
// on several masters: tools (redlockctl sem) act on a slot's lease through
// it.
func SlotKey(name string, i int) string { return slotKey(name, i) }

// slotKey is the redlock key of slot i of a multi-master semaphore.
func slotKey(name string, i int) string {
	return base(name) + ":slot:" + strconv.Itoa(i)
}
