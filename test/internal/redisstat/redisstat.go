// Package redisstat reads what a Redis server has done, for measurements
// of vmcp's Redis cost: commands executed by name (INFO commandstats, the
// INFO command itself excluded), memory used (used_memory) and keys held
// (db 0). It also starts a private redis-server, so that no other client's
// commands pollute the counts.
package redisstat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stats is one reading of a Redis server, or the difference of two.
type Stats struct {
	Calls      map[string]int64 // executed commands by name ("get", "client|setinfo"), INFO excluded
	UsedMemory int64            // bytes (INFO memory used_memory)
	Keys       int64            // keys in db 0 (INFO keyspace)
}

// Read reads s from rdb with one INFO command (commandstats, memory and
// keyspace); that INFO is not counted.
func Read(ctx context.Context, rdb *redis.Client) (Stats, error) {
	info, err := rdb.Info(ctx, "commandstats", "memory", "keyspace").Result()
	if err != nil {
		return Stats{}, fmt.Errorf("redis INFO: %w", err)
	}
	return Parse(info), nil
}

// Parse parses the text of INFO commandstats, memory and keyspace.
func Parse(info string) Stats {
	s := Stats{Calls: map[string]int64{}}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(k, "cmdstat_"):
			name := strings.TrimPrefix(k, "cmdstat_")
			if name != "info" {
				s.Calls[name] = field(v, "calls")
			}
		case k == "used_memory":
			s.UsedMemory, _ = strconv.ParseInt(v, 10, 64)
		case k == "db0":
			s.Keys = field(v, "keys")
		}
	}
	return s
}

// field is the integer name=N in a comma separated list.
func field(list, name string) int64 {
	for _, kv := range strings.Split(list, ",") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// Sub is s minus earlier reading b.
func (s Stats) Sub(b Stats) Stats {
	d := Stats{Calls: map[string]int64{}, UsedMemory: s.UsedMemory - b.UsedMemory, Keys: s.Keys - b.Keys}
	for k, v := range s.Calls {
		if v -= b.Calls[k]; v != 0 {
			d.Calls[k] = v
		}
	}
	return d
}

// Add is s plus b (two servers' readings: the primaries of a Redis Cluster).
func (s Stats) Add(b Stats) Stats {
	d := Stats{Calls: map[string]int64{}, UsedMemory: s.UsedMemory + b.UsedMemory, Keys: s.Keys + b.Keys}
	for k, v := range s.Calls {
		d.Calls[k] += v
	}
	for k, v := range b.Calls {
		d.Calls[k] += v
	}
	return d
}

// Commands is the number of commands executed (INFO excluded); commands a
// script runs count too, beside the EVALSHA that ran it.
func (s Stats) Commands() int64 {
	var n int64
	for _, v := range s.Calls {
		n += v
	}
	return n
}

// Scripts is the number of script runs (EVAL, EVALSHA, FCALL and their
// read-only forms): requests a client sent that executed other commands.
func (s Stats) Scripts() int64 {
	var n int64
	for k, v := range s.Calls {
		if strings.HasPrefix(k, "eval") || strings.HasPrefix(k, "fcall") {
			n += v
		}
	}
	return n
}

// Breakdown lists the commands of s, most frequent first, each divided by
// per: "set 1.00 evalsha 2.00 get 2.00".
func (s Stats) Breakdown(per float64) string {
	names := make([]string, 0, len(s.Calls))
	for k := range s.Calls {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := s.Calls[b] - s.Calls[a]; c != 0 {
			return int(c)
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %.2f", k, float64(s.Calls[k])/per)
	}
	return b.String()
}

// Server is a private redis-server on a loopback port, without
// persistence.
type Server struct {
	Addr string // 127.0.0.1:PORT
	cmd  *exec.Cmd
}

// Start starts redis-server (from PATH) on a free loopback port and waits
// until it answers PING (10 s).
func Start() (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	s := &Server{Addr: addr, cmd: cmd}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err = rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, errors.Join(fmt.Errorf("redis-server on %s does not answer", addr), err)
		}
	}
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Client is a one-connection client for reading s (one connection: no
// new connection's HELLO lands in a measured phase).
func (s *Server) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1, MinIdleConns: 1})
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}
