// Package clustertest gives tests a Redis to run vmcp clusters on: the one
// at VMCP_REDIS_ADDR (default 127.0.0.1:6379) when it answers, else a
// private redis-server; a unique key prefix per test, deleted afterwards; a
// private redis-server that can be stopped and restarted; a TCP proxy and
// a dialer (Cutter) that cut one node off Redis; a Redis Cluster (with or
// without replicas, failover.go) and a Sentinel set started on loopback
// whose primary a test can kill (servers.go), and topologies (Redis) to
// run tests on each. Processes listen on loopback ports below the
// kernel's ephemeral range and count as started once that very process
// answers (proc.go). Tests skip, saying why, only when no Redis
// answers and redis-server is not installed.
package clustertest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// URL returns the redis:// URL of a Redis for tests: the shared one at
// VMCP_REDIS_ADDR (default 127.0.0.1:6379) if it answers PING, else a
// private redis-server started for this test (skipped if not installed).
func URL(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("VMCP_REDIS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	if ping(addr, 300*time.Millisecond) == nil {
		return "redis://" + addr + "/0"
	}
	return Start(t).URL()
}

// Prefix returns a key prefix unique to this test and deletes every key
// under it on url when the test ends.
func Prefix(t testing.TB, url string) string {
	t.Helper()
	p := "vmcptest:" + strings.ToLower(rand.Text()[:12]) + ":"
	t.Cleanup(func() { _ = DeleteKeys(url, p) })
	return p
}

// DeleteKeys deletes every key starting with prefix.
func DeleteKeys(url, prefix string) error {
	o, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(o)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := Keys(ctx, rdb, prefix)
	if err != nil || len(keys) == 0 {
		return err
	}
	return rdb.Del(ctx, keys...).Err()
}

// Keys lists the keys starting with prefix (SCAN).
func Keys(ctx context.Context, rdb *redis.Client, prefix string) ([]string, error) {
	var out []string
	iter := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}

// Client returns a go-redis client for url, closed when the test ends.
func Client(t testing.TB, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	rdb := redis.NewClient(o)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Server is a private redis-server process on a loopback port (no
// persistence: a restart loses its data, like a crash).
type Server struct {
	Addr string // 127.0.0.1:PORT

	t  testing.TB
	mu sync.Mutex
	p  *proc // nil while stopped
}

// Start starts a private redis-server on a free loopback port and stops it
// when the test ends; it skips the test if redis-server is not installed.
// A port another process took between its pick and the bind is picked again.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("clustertest: no Redis answers and redis-server is not installed (make redis installs it)")
	}
	return startServer(t, pickAddr)
}

// startServer is Start on addresses from pick.
func startServer(t testing.TB, pick func() (string, error)) *Server {
	t.Helper()
	s := &Server{t: t}
	t.Cleanup(s.Stop)
	for range 5 {
		var err error
		if s.Addr, err = pick(); err != nil {
			t.Fatalf("clustertest: %v", err)
		}
		err = s.start()
		if err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) {
			t.Fatalf("clustertest: %v", err)
		}
	}
	t.Fatalf("clustertest: no free port for a redis-server")
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Stop kills the server (SIGKILL) and waits for it to exit; idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		s.p.Kill()
		s.p = nil
	}
}

// Restart starts the server again on the same port (empty), once stopped;
// it fails the test if another process took the port meanwhile.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("clustertest: restart: %v", err)
	}
}

// start starts redis-server on s.Addr unless it runs, and waits until that
// very process answers (see spawn).
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != nil {
		return nil
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	p, err := spawn(exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.t.TempDir()), redis.Options{Addr: s.Addr})
	s.p = p
	return err
}

// ping waits up to wait for PONG from addr.
func ping(addr string, wait time.Duration) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err != nil && strings.HasPrefix(err.Error(), "NOAUTH") {
			err = nil // it answers (it wants a password)
		}
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Proxy is a TCP proxy to a Redis: a node given Proxy.URL can be cut off
// Redis (Cut) as if it were partitioned or dead, while others keep theirs.
type Proxy struct {
	Addr string

	target string
	l      net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	cut    bool
}

// NewProxy proxies a loopback port to the Redis at url; it is cut when the
// test ends.
func NewProxy(t testing.TB, url string) *Proxy {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: o.Addr, l: l}
	go p.accept()
	t.Cleanup(p.Cut)
	return p
}

// URL is the proxy's redis:// URL.
func (p *Proxy) URL() string { return fmt.Sprintf("redis://%s/0", p.Addr) }

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			_ = c.Close()
			_ = u.Close()
			return
		}
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
		go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
	}
}

// Cut closes the proxy and every connection through it: new connections
// are refused. Idempotent.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return
	}
	p.cut = true
	_ = p.l.Close()
	for _, c := range p.conns {
		_ = c.Close()
	}
}
