// Package docker is the jepsen-like backend of Redis masters in Docker
// containers, run with github.com/testcontainers/testcontainers-go: every
// master is a container of the local image quorumlock/redis:local (FROM
// scratch, Debian's redis-server; built by .ci/redis-image/build.sh, which
// Start runs when the image is missing, since no registry is reachable) on
// a private network, published on 127.0.0.1 only.
//
// Start sets TESTCONTAINERS_RYUK_DISABLED=true and
// TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 before any provider exists: there
// is no reaper, so Close removes every container and the network by id, and
// .ci/run sweeps leftovers by the label org.testcontainers=true that
// testcontainers puts on them. Pause, unpause and kill go through the
// provider's Docker client (github.com/moby/moby/client). A restart without
// persistence replaces the container by a fresh one on the same network
// alias; a restart with AOF starts the same container again. Mapped ports
// are read again after every start.
package docker
