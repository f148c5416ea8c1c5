package e2e_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
