package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// Image is the image the masters run.
const Image = "quorumlock/redis:local"

// Label is put on every container and network the backend makes, besides
// testcontainers' own org.testcontainers=true.
const Label = "io.quorumlock.jepsen-like"

var redisPort = mobynet.MustParsePort("6379/tcp")

// ErrNoDocker is returned (wrapped) when Docker cannot be reached.
var ErrNoDocker = errors.New("docker: Docker is not available")

// Options configure Start.
type Options struct {
	Masters     int                 // default 5
	Persistence backend.Persistence // of the masters at start
	// ClockShim is the path of the built clock shim (nemesis/clockshim) on
	// this host; when set, every container runs with it preloaded, read
	// from a directory bind-mounted read-only at /clock together with one
	// offset file per master, and SetClockOffset works. The image carries
	// the host's own C library, so the host's build loads in it.
	ClockShim string
}

// Backend is a set of Redis master containers on a private network.
type Backend struct {
	cli     client.APIClient
	nw      *testcontainers.DockerNetwork
	masters []*Master
	// clockDir holds the clock shim and each master's offset file, mounted
	// at /clock in every container; "" without the shim.
	clockDir string

	mu   sync.Mutex
	ctrs []*testcontainers.DockerContainer // every container made, for Close
}

var _ backend.Backend = (*Backend)(nil)

// Environment sets the two variables testcontainers must see before any
// provider exists: no reaper container (none can be pulled here) and the
// host it publishes on.
func Environment() {
	_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	_ = os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
}

// Start builds the image if it is missing, makes the network and starts the
// masters. On error, whatever was made is removed.
func Start(ctx context.Context, o Options) (*Backend, error) {
	Environment()
	if o.Masters == 0 {
		o.Masters = 5
	}
	if o.Masters < 1 {
		return nil, fmt.Errorf("docker: %d masters: need at least 1", o.Masters)
	}
	prov, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(tclog.NewNoopLogger()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDocker, err)
	}
	cli := prov.Client()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDocker, err)
	}
	if err := EnsureImage(ctx, cli); err != nil {
		return nil, err
	}
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(map[string]string{Label: "true"}))
	if err != nil {
		return nil, fmt.Errorf("docker: network: %w", err)
	}
	b := &Backend{cli: cli, nw: nw}
	if o.ClockShim != "" {
		if b.clockDir, err = clockDir(o.ClockShim, o.Masters); err != nil {
			_ = b.Close()
			return nil, err
		}
	}
	for i := range o.Masters {
		m := &Master{b: b, name: "m" + strconv.Itoa(i), persistence: o.Persistence}
		if err := m.replace(ctx, o.Persistence); err != nil {
			_ = b.Close()
			return nil, err
		}
		b.masters = append(b.masters, m)
	}
	return b, nil
}

// EnsureImage builds Image with .ci/redis-image/build.sh when the Docker
// daemon does not have it.
func EnsureImage(ctx context.Context, cli client.APIClient) error {
	if _, err := cli.ImageInspect(ctx, Image); err == nil {
		return nil
	}
	script, err := buildScript()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, script, Image)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("docker: build %s with %s: %w: %s", Image, script, err, out)
	}
	return nil
}

// buildScript finds .ci/redis-image/build.sh above the working directory.
func buildScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	for {
		p := filepath.Join(dir, ".ci", "redis-image", "build.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("docker: image %s is missing and .ci/redis-image/build.sh was not found above the working directory; run it from the repository", Image)
		}
		dir = parent
	}
}

// run starts a container under alias, running redis-server with args; with
// the clock shim, its clock follows master's offset file.
func (b *Backend) run(ctx context.Context, alias, master string, args []string) (*testcontainers.DockerContainer, error) {
	c, err := testcontainers.Run(ctx, Image,
		b.clockOptions(master),
		testcontainers.WithLogger(tclog.NewNoopLogger()),
		testcontainers.WithCmd(args...),
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithLabels(map[string]string{Label: "true"}),
		tcnetwork.WithNetwork([]string{alias}, b.nw),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			// Published on 127.0.0.1 only, on a port Docker picks.
			hc.PortBindings = mobynet.PortMap{redisPort: {{HostIP: loopback, HostPort: "0"}}}
		}),
		testcontainers.WithWaitStrategyAndDeadline(30*time.Second, wait.ForLog("Ready to accept connections")),
	)
	if c != nil {
		b.mu.Lock()
		b.ctrs = append(b.ctrs, c)
		b.mu.Unlock()
	}
	if err != nil {
		return nil, fmt.Errorf("docker: start %s: %w", alias, err)
	}
	return c, nil
}

// Masters returns the masters in order.
func (b *Backend) Masters() []backend.Master {
	out := make([]backend.Master, len(b.masters))
	for i, m := range b.masters {
		out[i] = m
	}
	return out
}

// Heal unpauses paused masters, reconnects cut ones and replaces killed
// ones by empty ones.
func (b *Backend) Heal(ctx context.Context) error {
	var errs []error
	for _, m := range b.masters {
		errs = append(errs, m.heal(ctx))
	}
	return errors.Join(errs...)
}

// Close removes every container and the network, by id.
func (b *Backend) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.mu.Lock()
	ctrs := b.ctrs
	b.ctrs = nil
	b.mu.Unlock()
	var errs []error
	for _, c := range ctrs {
		// A paused container cannot be removed gracefully: force it.
		_, err := b.cli.ContainerRemove(ctx, c.GetContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !strings.Contains(err.Error(), "No such container") {
			errs = append(errs, fmt.Errorf("docker: remove %s: %w", c.GetContainerID(), err))
		}
	}
	if b.nw != nil {
		if err := b.nw.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("docker: remove network: %w", err))
		}
	}
	if b.clockDir != "" {
		errs = append(errs, os.RemoveAll(b.clockDir))
	}
	return errors.Join(errs...)
}

func redisArgs(p backend.Persistence, extra ...string) []string {
	args := []string{"--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data", "--repl-diskless-sync-delay", "0"}
	return append(append(args, p.Args()...), extra...)
}

func hostAddr(ctx context.Context, c *testcontainers.DockerContainer) (string, error) {
	p, err := c.MappedPort(ctx, "6379/tcp")
	if err != nil {
		return "", fmt.Errorf("docker: mapped port: %w", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p.Num()))), nil
}

func flushAll(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	return c.FlushAll(ctx).Err()
}
