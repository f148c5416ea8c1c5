package restart

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// ErrTooFewSources is a sync that could not read enough masters: fewer than
// the certified sources it needed, or not every master when it needed all.
var ErrTooFewSources = errors.New("too few masters to raise the counters from")

// SyncGuardTTL bounds how long a sync's guard outlives a sync that died.
const SyncGuardTTL = 10 * time.Minute

// Sources says which masters a sync reads (rule Y of docs/safety.md):
// Certified > 0 needs at least that many certified sources (M − q + 1: they
// meet every write-back majority); Certified == 0 needs every source given
// to answer (every other master: a token sits on q masters of which fewer
// than q lost data).
type Sources struct {
	Masters   []Member
	Certified int
}

// Sync raises target's fencing counters, token floor and lambda set to the
// maxima read from the sources, each source read atomically with its
// certificate and lineage (and its per-key counters of an earlier version
// between two such reads that must agree), then certifies target, guarded:
// only if the guard set before the reads is still there and target's
// lineage did not change since. ready is given the longest live TTL the
// sources hold before anything is raised; a non-nil error stops the sync
// there (rule Q: the quarantine must have lasted that long). buckets is B.
func Sync(ctx context.Context, target Member, src Sources, buckets int, ready func(lambda time.Duration) error) (string, error) {
	st, err := Inspect(ctx, target.RDB, 0)
	if err != nil {
		return "", err
	}
	nonce := newNonce()
	guardKey := keys.SyncPrefix + nonce
	guard := st.Lineage.String() + " sync " + nonce
	if _, err := writeGuard(ctx, target.RDB, guardKey, st.Lineage, guard, SyncGuardTTL, false); err != nil {
		return "", err
	}
	abandon := func(err error) (string, error) {
		_ = target.RDB.Del(context.WithoutCancel(ctx), guardKey).Err()
		return "", err
	}
	all, lambda, err := readSources(ctx, src, buckets)
	if err != nil {
		return abandon(err)
	}
	if err := ready(lambda); err != nil {
		return abandon(err)
	}
	if err := Raise(ctx, target.RDB, all); err != nil {
		return abandon(err)
	}
	cert, err := certify(ctx, target.RDB, guardKey, guard, "sync "+nonce, true)
	if err != nil {
		return abandon(err)
	}
	return cert, nil
}

// readSources reads every source's counters and returns their maxima and the
// longest live TTL among them, or ErrTooFewSources.
func readSources(ctx context.Context, src Sources, buckets int) (Counters, time.Duration, error) {
	type read struct {
		c         Counters
		lambda    time.Duration
		certified bool
	}
	reads, errs := each(src.Masters, func(mb Member) (read, error) {
		before, err := Inspect(ctx, mb.RDB, buckets)
		if err != nil {
			return read{}, err
		}
		c := before.Counters
		if err := c.FoldLegacy(ctx, mb.RDB, buckets); err != nil {
			return read{}, err
		}
		after, err := Inspect(ctx, mb.RDB, 0)
		if err != nil {
			return read{}, err
		}
		if after.Lineage != before.Lineage || after.Cert != before.Cert {
			return read{}, errors.New("it lost its data, restarted or was re-certified while its counters were read")
		}
		return read{c, before.LiveLambda(), before.Certified()}, nil
	})
	var all Counters
	var lambda time.Duration
	certified, answered := 0, 0
	for i, r := range reads {
		if errs[i] != nil {
			continue
		}
		answered++
		if src.Certified > 0 && !r.certified {
			continue
		}
		if r.certified {
			certified++
		}
		all.Merge(r.c)
		lambda = max(lambda, r.lambda)
	}
	switch {
	case src.Certified > 0 && certified < src.Certified:
		return all, 0, fmt.Errorf("%w: %d certified masters read, %d needed: %w", ErrTooFewSources, certified, src.Certified, errors.Join(prefixed(src.Masters, errs)...))
	case src.Certified == 0 && answered < len(src.Masters):
		return all, 0, fmt.Errorf("%w: %d of the %d other masters read, every one needed: %w", ErrTooFewSources, answered, len(src.Masters), errors.Join(prefixed(src.Masters, errs)...))
	}
	return all, lambda, nil
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
