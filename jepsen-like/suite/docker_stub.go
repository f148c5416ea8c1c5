package suite

import (
	"context"
	"errors"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

func startDocker(ctx context.Context, masters int, per backend.Persistence) (backend.Backend, error) {
	return nil, errors.New("docker backend: not yet")
}
