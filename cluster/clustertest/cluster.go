package clustertest

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// Cluster is a set of independent redis-server masters.
type Cluster struct {
	Servers []*Server
}

// Start starts n independent masters with persistence p (NoPersistence by
// default) and stops them when the test ends.
func Start(t testing.TB, n int, p ...Persistence) *Cluster {
	t.Helper()
	per := NoPersistence
	if len(p) > 0 {
		per = p[0]
	}
	c := &Cluster{}
	for range n {
		c.Servers = append(c.Servers, StartServer(t, per))
	}
	return c
}

// Launch starts n independent masters outside a test (for Example functions
// and commands); the caller must Close the cluster.
func Launch(n int, p Persistence) (*Cluster, error) {
	c := &Cluster{}
	for range n {
		s, err := LaunchServer(p)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// Close stops every master a Launch started.
func (c *Cluster) Close() {
	for _, s := range c.Servers {
		s.Close()
	}
}

// URLs returns the masters' redis:// URLs.
func (c *Cluster) URLs() []string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.URL()
	}
	return urls
}

// Clients returns one go-redis client per master (see Server.Client).
func (c *Cluster) Clients(t testing.TB, opts ...func(*redis.Options)) []redis.UniversalClient {
	t.Helper()
	out := make([]redis.UniversalClient, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.Client(t, opts...)
	}
	return out
}

// ResumeAll resumes every paused server; tests defer it so that a failure
// never leaves a process stopped while cleanup talks to it.
func (c *Cluster) ResumeAll() {
	for _, s := range c.Servers {
		s.mu.Lock()
		paused := s.paused
		s.mu.Unlock()
		if paused {
			_ = s.Resume()
		}
	}
}
