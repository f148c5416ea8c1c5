package nemesis

import "strconv"

// Processes is an Env that names the process a slot runs now (the id its
// history events carry); the watcher's event then names it.
type Processes interface {
	Process(slot int) int
}

// watcherOf is the slot whose process an episode keeps through its fault:
// a long-lived client that watched the masters before the loss (its token
// cache, the lineages and certificates it learned) and competes after it
// beside the fresh ones. It is the last slot but the holder's, so that the
// first one, Rejoin's challenger, is still a fresh client; with fewer than
// three slots there is none (-1): the holder and one challenger.
func watcherOf(holder, slots int) int {
	if slots < 3 {
		return -1
	}
	w := slots - 1
	if w == holder {
		w--
	}
	return w
}

// keepWatcher keeps the watcher of holder's episode (see watcherOf) through
// the fault, records it ("<fault> watcher p<process>" on c<w>, the process
// when the Env names it), and returns the call that lets it go at the
// fault's end.
func (n *Nemesis) keepWatcher(holder int, fault string) (release func()) {
	w := watcherOf(holder, n.slots)
	if w < 0 {
		return func() {}
	}
	n.env.Keep(w, true)
	value := fault + " watcher"
	if ps, ok := n.env.(Processes); ok {
		value += " p" + strconv.Itoa(ps.Process(w))
	}
	n.rec.Nemesis(names("c", []int{w}), value)
	return func() { n.env.Keep(w, false) }
}
