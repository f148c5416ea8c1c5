package restart

import (
	"context"
	"errors"
	"fmt"

	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

// ErrRefused is a certification (or its guard) that the master refused: its
// guard was gone or changed (it lost its data, or another certification came
// first), its lineage changed since it was read, or it is not a master.
// Nothing was written.
var ErrRefused = errors.New("certification refused")

// certify writes a certificate of origin on rdb (certify.lua): only if
// guardKey still holds guard and guard names the master's current lineage.
// It returns the certificate in place; when the master already had one
// naming its lineage, that one.
func certify(ctx context.Context, rdb redis.UniversalClient, guardKey, guard, origin string, dropGuard bool) (string, error) {
	drop := "0"
	if dropGuard {
		drop = "1"
	}
	res, err := certifyScript.Run(ctx, rdb, []string{keys.Incarnation, keys.Cert, guardKey}, guard, origin, drop).Slice()
	if err != nil {
		return "", err
	}
	if len(res) != 2 {
		return "", fmt.Errorf("certify script returned %d values, want 2", len(res))
	}
	status, _ := res[0].(int64)
	text, _ := res[1].(string)
	if status == 0 {
		return "", fmt.Errorf("%w: %s", ErrRefused, text)
	}
	return text, nil
}

// writeGuard writes guard at guardKey on rdb (guard.lua), only while the
// master's lineage is still l; with ttl > 0 the guard expires; with nx a
// guard already there is kept. It returns the guard now in place.
func writeGuard(ctx context.Context, rdb redis.UniversalClient, guardKey string, l probe.Lineage, guard string, ttl time.Duration, nx bool) (string, error) {
	mode := ""
	if nx {
		mode = "NX"
	}
	res, err := guardScript.Run(ctx, rdb, []string{keys.Incarnation, guardKey}, l.String(), guard, ttl.Milliseconds(), mode).Slice()
	if err != nil {
		return "", err
	}
	if len(res) != 2 {
		return "", fmt.Errorf("guard script returned %d values, want 2", len(res))
	}
	status, _ := res[0].(int64)
	text, _ := res[1].(string)
	if status == 0 {
		return "", fmt.Errorf("%w: %s", ErrRefused, text)
	}
	return text, nil
}
