package mutants

// Mutant is one deliberate bug: in File (relative to the module root),
// the one occurrence of Old becomes New.
type Mutant struct {
	// Name is a short identifier, e.g. "quorum-1".
	Name string
	// Bug says what it breaks, in the words of issue 18.
	Bug  string
	File string
	Old  string
	New  string
}

// All are the mutants of issue 18 §3, in its order.
var All = []Mutant{
	{Name: "quorum-1", Bug: "quorum one too small", File: "redlock/client.go",
		Old: "\t\tquorum:   quorum.Size(len(masters), cfg.tolerance),\n",
		New: "\t\tquorum:   quorum.Size(len(masters), cfg.tolerance) - 1,\n"},
	{Name: "release-any", Bug: "release without the owner check", File: "redlock/scripts/release.lua",
		Old: "  if v == value then\n",
		New: "  if v then\n"},
	{Name: "no-drift", Bug: "validity ignoring drift", File: "redlock/validity.go",
		Old: "\treturn ttl - time.Duration(float64(ttl)*c.cfg.driftFactor) - clockDriftFloor\n",
		New: "\treturn ttl\n"},
	{Name: "validity-from-end", Bug: "validity counted from the end of the round instead of its start", File: "redlock/lock.go",
		Old: "\tvalidUntil := c.deadline(a.start, a.ttl)\n",
		New: "\tvalidUntil := c.deadline(c.cfg.clock.Now(), a.ttl)\n"},
	{Name: "validity-2ttl", Bug: "validity twice the TTL", File: "redlock/validity.go",
		Old: "\treturn ttl - time.Duration(float64(ttl)*c.cfg.driftFactor) - clockDriftFloor\n",
		New: "\treturn 2*ttl - time.Duration(float64(ttl)*c.cfg.driftFactor) - clockDriftFloor\n"},
	{Name: "no-validity-left-check", Bug: `no "validity left" check`, File: "redlock/lock.go",
		Old: "\tif !now.Before(validUntil) {\n",
		New: "\tif false && !now.Before(validUntil) {\n"},
	{Name: "fastpath-q-1", Bug: "the fast path counting q−1 masters", File: "redlock/lock.go",
		Old: "\treturn counted >= q || all\n",
		New: "\treturn counted >= q-1 || all\n"},
	{Name: "writeback-equal", Bug: "equal tokens accepted by the write-back", File: "redlock/scripts/writeback.lua",
		Old: "if tonumber(counter) >= tonumber(ARGV[2]) then\n",
		New: "if tonumber(counter) > tonumber(ARGV[2]) then\n"},
	{Name: "token-0", Bug: "every lease token 0", File: "redlock/lock.go",
		Old: "\treturn c.newLease(a.key, a.value, a.ttl, token, validUntil, a.r.calls, a.lc), nil\n",
		New: "\treturn c.newLease(a.key, a.value, a.ttl, 0, validUntil, a.r.calls, a.lc), nil\n"},
	{Name: "quarantine-off", Bug: "the quarantine off by default", File: "redlock/options.go",
		Old: "\t\tquarantine:     true,\n",
		New: "\t\tquarantine:     false,\n"},
	{Name: "restart-check-accepts", Bug: "the epoch / data-loss check always accepting", File: "internal/probe/lineage.go",
		Old: "\treturn ok && role == \"master\" && c.Lineage.Same(l)\n",
		New: "\t_ = c\n\treturn ok || !ok\n"},
	{Name: "extend-keeps-deadline", Bug: "a failed Extend keeping its old deadline", File: "redlock/extend.go",
		Old: "\tl.shortenDeadline(newDeadline)\n",
		New: "\t// (mutant: the old deadline is kept)\n"},
	{Name: "lambda-short", Bug: "the lambda entry written only once it has ended, not when it falls short of the new lease (issue 19's cut, broken)", File: "redlock/scripts/acquire.lua",
		Old: "  if type(recorded) ~= 'string' or tonumber(recorded) < now + ttl then\n",
		New: "  if type(recorded) ~= 'string' or tonumber(recorded) < now then\n"},
	{Name: "lambda-short-merged", Bug: "the same in merged acquires (acquire_many.lua)", File: "redlock/scripts/acquire_many.lua",
		Old: "  if type(recorded) ~= 'string' or tonumber(recorded) < now + ttl then\n",
		New: "  if type(recorded) ~= 'string' or tonumber(recorded) < now then\n"},
}
