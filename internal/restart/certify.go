package restart

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// ErrRefused is a certification that the master refused: its guard was gone
// or changed (it lost its data, or another certification came first), its
// lineage changed since the guard, or it is not a master. Nothing was
// written.
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
	res, err := certifyScript.Run(ctx, rdb, []string{keys.Cert, guardKey}, guard, origin, drop).Slice()
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
