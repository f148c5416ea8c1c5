package inspect

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	layout "github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/redlock/semaphore"

	"github.com/redis/go-redis/v9"
)

// Severities of a Finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Kinds of a Finding.
const (
	KindNoTTL       = "no-ttl"       // a lock key that never expires (error)
	KindStray       = "stray"        // a lock key held on fewer than a majority of masters (warning)
	KindCounterOnly = "counter-only" // a fencing counter without a lock key (info: counters never expire)
)

// Finding is one thing audit found.
type Finding struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Key      string `json:"key"`
	Master   int    `json:"master"`          // -1 for a finding about the key across masters
	Owner    string `json:"owner,omitempty"` // OwnerID of the value
	PTTLms   int64  `json:"pttl_ms"`         // -1 no TTL; -2 absent
	Fence    uint64 `json:"fence"`           // the highest fencing counter seen for the key
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`

	value  string // the lock value, for the owner-checked fix; never printed
	proven bool   // a quorumlock lock key beyond doubt: the only kind FixTTL touches
}

// Fixable reports whether FixTTL may give the finding's key a TTL: a no-ttl
// finding of a key proven to be a quorumlock lock key (see Audit).
func (f Finding) Fixable() bool { return f.Kind == KindNoTTL && f.proven }

// MasterScan is one master's part of an audit.
type MasterScan struct {
	Master    int    `json:"master"`
	URL       string `json:"url"`
	Reachable bool   `json:"reachable"`
	Cause     string `json:"cause,omitempty"`
	Scanned   int    `json:"scanned"` // string keys matched by the pattern
}

// AuditReport is what Audit found.
type AuditReport struct {
	Masters  []MasterScan `json:"masters"`
	Findings []Finding    `json:"findings"`
}

// Errors counts the findings of severity error.
func (r AuditReport) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			n++
		}
	}
	return n
}

// AuditOptions configures Audit.
type AuditOptions struct {
	// Match is a SCAN MATCH pattern (default "*"). When set, every string key
	// it matches counts as a lock; otherwise only lock-like keys do (see
	// Audit).
	Match string
	// Batch is the SCAN COUNT hint and the GET/PTTL pipeline depth (default 1000).
	Batch int
	// Quorum is how many masters a lock needs (default 0: a majority;
	// cluster.Cluster.Quorum gives it with a data-loss tolerance).
	Quorum int
}

var hexValue = regexp.MustCompile(`^[0-9a-f]{32}$`)

// MaxValueLen is the longest value Audit takes for a lock value: lock values
// are short tokens, and Audit reads no more of any value than this.
const MaxValueLen = 256

// entry is one key on one master.
type entry struct {
	value string
	pttl  int64
}

// masterKeys is what one master holds.
type masterKeys struct {
	scan     MasterScan
	locks    map[string]entry  // candidate lock keys
	counters map[string]uint64 // lock key -> fencing counter
}

// Audit SCANs every master (never KEYS) for lock keys and fencing counters.
// A string key is a lock key when Match was given, or when it looks like one:
// its value is a quorumlock lock value (32 hex digits), a fencing counter
// exists for it, or its name contains "lock". Keys under layout.Prefix and
// semaphore.KeyPrefix are the library's own (counters, token buckets, sync
// keys, semaphores) and never lock keys, whatever Match says.
//
// A lock key is proven (a quorumlock lock key beyond doubt) when its value
// has the library's format (32 lowercase hex digits, 128 random bits) and
// the same value is on at least a quorum of masters, or a fencing counter of
// the library exists for the key. Findings: a proven lock key without a TTL
// is an error (no-ttl, which FixTTL may repair); a key that only looks like
// a lock (its name, Match, or a lock-like value on too few masters) without
// a TTL is a warning (no-ttl) that no fix touches: it may be an application
// key such as "chain:block:height". Keys held by an owner on fewer than a
// majority of masters are warnings (stray), and fencing counters without a
// lock key are info (counter-only). Values longer than MaxValueLen bytes are
// not lock values; Audit reads at most that much of each string key.
//
// Audit fails only if ctx ends; an unreachable master is reported in
// AuditReport.Masters (strays are then judged on the masters that answered).
func Audit(ctx context.Context, clients []redis.UniversalClient, urls []string, opt AuditOptions) (AuditReport, error) {
	explicit := opt.Match != ""
	if !explicit {
		opt.Match = "*"
	}
	if opt.Batch <= 0 {
		opt.Batch = 1000
	}
	per := make([]masterKeys, len(clients))
	var wg sync.WaitGroup
	for i, rc := range clients {
		wg.Go(func() {
			per[i] = scanMaster(ctx, rc, opt)
			per[i].scan.Master, per[i].scan.URL = i, urls[i]
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return AuditReport{}, fmt.Errorf("audit: %w", err)
	}
	rep := AuditReport{}
	answered := 0
	hasCounter := map[string]uint64{}
	for _, mk := range per {
		rep.Masters = append(rep.Masters, mk.scan)
		if mk.scan.Reachable {
			answered++
		}
		for k, c := range mk.counters {
			hasCounter[k] = max(hasCounter[k], c)
		}
	}
	quorum := opt.Quorum
	if quorum <= 0 {
		quorum = len(clients)/2 + 1
	}
	isLock := func(k string, e entry) bool {
		_, fenced := hasCounter[k]
		return explicit || fenced || hexValue.MatchString(e.value) || strings.Contains(strings.ToLower(k), "lock")
	}
	held := map[string]map[string]int{} // key -> value -> masters holding it
	for _, mk := range per {
		for k, e := range mk.locks {
			if held[k] == nil {
				held[k] = map[string]int{}
			}
			held[k][e.value]++
		}
	}
	proven := func(k string, e entry) bool {
		_, fenced := hasCounter[k]
		return hexValue.MatchString(e.value) && (fenced || held[k][e.value] >= quorum)
	}
	keys := map[string]bool{}
	for _, mk := range per {
		for k, e := range mk.locks {
			if isLock(k, e) {
				keys[k] = true
			}
		}
	}
	for _, k := range sortedKeys(keys) {
		owners := map[string]int{}
		for _, mk := range per {
			if e, ok := mk.locks[k]; ok {
				owners[OwnerID(e.value)]++
			}
		}
		for i, mk := range per {
			e, ok := mk.locks[k]
			if !ok {
				continue
			}
			owner := OwnerID(e.value)
			f := Finding{Key: k, Master: i, Owner: owner, PTTLms: e.pttl, Fence: hasCounter[k], value: e.value, proven: proven(k, e)}
			switch {
			case e.pttl == -1 && f.proven:
				f.Severity, f.Kind = SeverityError, KindNoTTL
				f.Message = fmt.Sprintf("%s on master %d (owner %s) has no TTL: it never expires, so if its holder died nobody can take this lock again", k, i, owner)
				f.Fix = "redlockctl audit --fix-ttl D --yes (sets a TTL where the key still holds this value), or DEL it once its holder is known to be gone"
				rep.Findings = append(rep.Findings, f)
			case e.pttl == -1:
				f.Severity, f.Kind = SeverityWarning, KindNoTTL
				f.Message = fmt.Sprintf("%s on master %d has no TTL and may be a lock (%s), but is not proven to be a quorumlock lock key (the library's lock value on a quorum of masters): it may be an application key", k, i, guessReason(explicit, k, e))
				f.Fix = "--fix-ttl leaves it alone: if it is a lock whose holder is gone, EXPIRE or DEL it by hand"
				rep.Findings = append(rep.Findings, f)
			}
			if owners[owner] < quorum && answered >= quorum {
				g := f
				g.Severity, g.Kind = SeverityWarning, KindStray
				g.Message = fmt.Sprintf("%s on master %d is held by owner %s on only %d of %d masters (a lock needs %d): a stray minority key, left by a failed attempt or a lost lease", k, i, owner, owners[owner], len(clients), quorum)
				switch {
				case e.pttl != -1:
					g.Fix = "it blocks nobody's majority and goes away with its TTL"
				case f.proven:
					g.Fix = "it never expires: fix its TTL (--fix-ttl) or DEL it"
				default:
					g.Fix = "it never expires: DEL or EXPIRE it by hand once it is known to be no live lock (--fix-ttl touches only proven lock keys)"
				}
				rep.Findings = append(rep.Findings, g)
			}
		}
	}
	for _, k := range sortedKeys(hasCounterSet(hasCounter)) {
		if isLibraryKey(k) {
			continue
		}
		held := false
		for _, mk := range per {
			if _, ok := mk.locks[k]; ok {
				held = true
			}
		}
		if !held {
			rep.Findings = append(rep.Findings, Finding{
				Severity: SeverityInfo, Kind: KindCounterOnly, Key: k, Master: -1, PTTLms: -2, Fence: hasCounter[k],
				Message: fmt.Sprintf("fencing counter of %s (highest %d) without a lock key: fine, counters never expire so that tokens keep growing", k, hasCounter[k]),
			})
		}
	}
	return rep, nil
}

func scanMaster(ctx context.Context, rc redis.UniversalClient, opt AuditOptions) masterKeys {
	mk := masterKeys{locks: map[string]entry{}, counters: map[string]uint64{}}
	fail := func(err error) masterKeys {
		mk.scan.Cause = Describe(err)
		return mk
	}
	var keys []string
	it := rc.ScanType(ctx, 0, opt.Match, int64(opt.Batch), "string").Iterator()
	for it.Next(ctx) {
		if k := it.Val(); !isLibraryKey(k) {
			keys = append(keys, k)
		}
	}
	if err := it.Err(); err != nil {
		return fail(err)
	}
	mk.scan.Scanned = len(keys)
	for start := 0; start < len(keys); start += opt.Batch {
		batch := keys[start:min(start+opt.Batch, len(keys))]
		pipe := rc.Pipeline()
		lens := make([]*redis.IntCmd, len(batch))
		gets := make([]*redis.StringCmd, len(batch))
		ttls := make([]*redis.DurationCmd, len(batch))
		for i, k := range batch {
			// At most MaxValueLen+1 bytes of each value: a big value is no lock.
			lens[i], gets[i], ttls[i] = pipe.StrLen(ctx, k), pipe.GetRange(ctx, k, 0, MaxValueLen), pipe.PTTL(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return fail(err)
		}
		for i, k := range batch {
			v, err := gets[i].Result()
			if err != nil || lens[i].Val() == 0 || lens[i].Val() > MaxValueLen { // deleted since the SCAN, or no lock
				continue
			}
			mk.locks[k] = entry{value: v, pttl: pttlMillis(ttls[i].Val())}
		}
	}
	var counters []string
	it = rc.ScanType(ctx, 0, layout.LegacyFencePrefix+opt.Match, int64(opt.Batch), "string").Iterator()
	for it.Next(ctx) {
		counters = append(counters, it.Val())
	}
	if err := it.Err(); err != nil {
		return fail(err)
	}
	for start := 0; start < len(counters); start += opt.Batch {
		batch := counters[start:min(start+opt.Batch, len(counters))]
		vals, err := rc.MGet(ctx, batch...).Result()
		if err != nil {
			return fail(err)
		}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				n, _ := strconv.ParseUint(s, 10, 64)
				mk.counters[strings.TrimPrefix(batch[i], layout.LegacyFencePrefix)] = n
			}
		}
	}
	mk.scan.Reachable = true
	return mk
}

// isLibraryKey reports whether key is one of the library's own: its
// counters, token buckets, sync keys and certificates (layout.Prefix), or a
// semaphore's keys (semaphore.KeyPrefix). Lock keys may start with neither.
func isLibraryKey(key string) bool {
	return strings.HasPrefix(key, layout.Prefix) || strings.HasPrefix(key, semaphore.KeyPrefix)
}

// guessReason says why a key that is not proven looks like a lock.
func guessReason(explicit bool, k string, e entry) string {
	switch {
	case explicit:
		return "it matches --match"
	case hexValue.MatchString(e.value):
		return "its value looks like a lock value, but on too few masters"
	}
	return fmt.Sprintf("its name %q contains \"lock\"", k)
}

var fixTTLScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// FixTTL sets ttl on the key of every Fixable finding (a no-TTL key proven
// to be a quorumlock lock key), on its master, only where the key still
// holds the value audited and still has no TTL. A key that only looks like
// a lock is never touched. It returns how many keys it fixed, and the
// errors of the masters it could not reach.
func FixTTL(ctx context.Context, clients []redis.UniversalClient, rep AuditReport, ttl time.Duration) (int, error) {
	if ttl <= 0 || ttl%time.Millisecond != 0 {
		return 0, fmt.Errorf("fix TTL %v: must be a positive whole number of milliseconds", ttl)
	}
	fixed := 0
	var errs []error
	for _, f := range rep.Findings {
		if !f.Fixable() {
			continue
		}
		n, err := fixTTLScript.Run(ctx, clients[f.Master], []string{f.Key}, f.value, ttl.Milliseconds()).Int64()
		if err != nil {
			errs = append(errs, fmt.Errorf("master %d: %s: %s", f.Master, f.Key, Describe(err)))
			continue
		}
		fixed += int(n)
	}
	return fixed, errors.Join(errs...)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasCounterSet(m map[string]uint64) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
