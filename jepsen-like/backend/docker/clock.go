package docker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// clockMount is where a container sees the backend's clock directory.
const clockMount = "/clock"

// clockDir makes the directory every container mounts at /clock: the clock
// shim, and one offset file per master (m0.offset, ...) at 0.
func clockDir(shim string, masters int) (string, error) {
	src, err := os.ReadFile(shim)
	if err != nil {
		return "", fmt.Errorf("docker: clock shim: %w", err)
	}
	dir, err := os.MkdirTemp("", "jepsen-like-clock-")
	if err != nil {
		return "", fmt.Errorf("docker: clock shim: %w", err)
	}
	fail := func(err error) (string, error) {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("docker: clock shim: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "clockshim.so"), src, 0o755); err != nil {
		return fail(err)
	}
	for i := range masters {
		if err := backend.WriteClockOffset(clockFile(dir, fmt.Sprintf("m%d", i)), 0); err != nil {
			return fail(err)
		}
	}
	return dir, nil
}

// clockFile is master's offset file in dir (on the host).
func clockFile(dir, master string) string { return filepath.Join(dir, master+".offset") }

// clockOptions preloads the clock shim into a container of master, reading
// master's offset file; nothing without the shim.
func (b *Backend) clockOptions(master string) testcontainers.ContainerCustomizer {
	if b.clockDir == "" {
		return testcontainers.CustomizeRequestOption(func(*testcontainers.GenericContainerRequest) error { return nil })
	}
	return testcontainers.CustomizeRequestOption(func(req *testcontainers.GenericContainerRequest) error {
		if err := testcontainers.WithEnv(map[string]string{
			"LD_PRELOAD":     clockMount + "/clockshim.so",
			"CLOCKSHIM_FILE": clockMount + "/" + master + ".offset",
		}).Customize(req); err != nil {
			return err
		}
		return testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, b.clockDir+":"+clockMount+":ro")
		}).Customize(req)
	})
}
