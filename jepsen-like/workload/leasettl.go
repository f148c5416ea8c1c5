package workload

import "time"

// LeaseTTLs are Hooks that may make a slot's lock acquisitions ask another
// TTL than the process's (the restart-long nemesis's long lease).
type LeaseTTLs interface {
	// LeaseTTL is the TTL slot's next acquisition asks; 0 means the
	// process's TTL.
	LeaseTTL(slot int) time.Duration
}

// leaseTTL is the TTL of the process's next lock acquisition.
func (p *Process) leaseTTL() time.Duration {
	if h, ok := p.Hooks.(LeaseTTLs); ok {
		if d := h.LeaseTTL(p.Slot); d > 0 {
			return d
		}
	}
	return p.TTL
}
