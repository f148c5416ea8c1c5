package docker

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/testcontainers/testcontainers-go"
)

// cutRules drop every packet that enters or leaves the container's network
// namespace on any interface but its loopback: the master is cut off from
// the host's clients (through the published port), the other containers
// and its replicas, while it keeps running, keeps its IP and alias on the
// network, and Docker keeps publishing its port.
var cutRules = [][]string{
	{"INPUT", "!", "-i", "lo", "-j", "DROP"},
	{"OUTPUT", "!", "-o", "lo", "-j", "DROP"},
}

// Disconnect cuts the master's container off the network with iptables DROP
// rules in its network namespace (nsenter -t <pid> -n iptables; needs root
// on the Docker host). Packets are dropped, not rejected: a new connection
// to the published port is accepted by docker-proxy, whose own connection
// to the container hangs in its handshake, so the client's first call times
// out; bytes in flight are retransmitted by TCP, so that they are delivered
// late after Reconnect (or the connection times out).
//
// It does not use docker network disconnect: measured on Docker 20.10, that
// unpublishes the port at once (a client sees "connection refused" within
// 10 ms, not a timeout) and docker network connect publishes it again on
// another host port (see docs/jepsen-like.md).
//
// A master already cut stays cut (no error). It fails on a killed master
// (no process, no namespace).
func (m *Master) Disconnect(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cut {
		return nil
	}
	if err := m.iptables(ctx, "-I"); err != nil {
		_ = m.iptables(context.WithoutCancel(ctx), "-D") // undo a half cut
		return err
	}
	m.cut = true
	return nil
}

// Reconnect removes the rules of Disconnect: the packets TCP retransmits
// from then on arrive. A master not cut is left alone (no error).
func (m *Master) Reconnect(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.cut {
		return nil
	}
	if err := m.iptables(ctx, "-D"); err != nil {
		return err
	}
	m.cut = false
	return nil
}

// iptables inserts (-I) or deletes (-D) cutRules in the namespace of the
// current container; m.mu is held.
func (m *Master) iptables(ctx context.Context, op string) error {
	if err := nsIptables(ctx, m.ctr, op, cutRules); err != nil {
		return fmt.Errorf("docker: cut %s: %w", m.name, err)
	}
	return nil
}

// nsIptables inserts (-I) or deletes (-D) rules (iptables arguments after
// the operation) in ctr's network namespace (nsenter -t <pid> -n; needs
// root on the Docker host). Every rule is tried; the first error is
// returned.
func nsIptables(ctx context.Context, ctr *testcontainers.DockerContainer, op string, rules [][]string) error {
	info, err := ctr.Inspect(ctx)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if info.State == nil || info.State.Pid == 0 {
		return fmt.Errorf("the container is not running")
	}
	pid := strconv.Itoa(info.State.Pid)
	var first error
	for _, r := range rules {
		args := append([]string{"-t", pid, "-n", "iptables", "-w", op}, r...)
		if out, err := exec.CommandContext(ctx, "nsenter", args...).CombinedOutput(); err != nil && first == nil {
			first = fmt.Errorf("nsenter %v: %w: %s", args, err, out)
		}
	}
	return first
}
