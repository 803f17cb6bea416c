package clustertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// portLow and portHigh bound the ports test processes listen on: below the
// kernel's ephemeral range (32768-60999 by default), so no outgoing
// connection of any process can take a port between its pick and
// redis-server's bind (seen: a cluster node that never answered, 60 s).
const portLow, portHigh = 20000, 32000

// pickAddr returns 127.0.0.1:PORT with a port in [portLow, portHigh) free now.
func pickAddr() (string, error) {
	for range 200 {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", portLow+rand.IntN(portHigh-portLow)))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		_ = l.Close()
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port in %d-%d", portLow, portHigh)
}

func freeAddr(t testing.TB) string {
	t.Helper()
	addr, err := pickAddr()
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	return addr
}

// proc is one redis-server process started by a test, killed at its end.
type proc struct {
	Addr   string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited
	out    *tail         // its output (the server's log)
}

// errPortTaken: redis-server could not listen on the port picked for it.
var errPortTaken = errors.New("port taken")

// spawn starts cmd, a redis-server to listen on o.Addr, and waits until
// that very process answers there (INFO's process_id is its pid; o holds
// the password or TLS to ask with). It fails at once, with the server's
// last words, if the process exits (errPortTaken if the port was taken).
func spawn(cmd *exec.Cmd, o redis.Options) (*proc, error) {
	p := &proc{Addr: o.Addr, cmd: cmd, exited: make(chan struct{}), out: &tail{}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.WaitDelay = time.Second // a forked child (a replica's sync) may hold the output open
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	if err := p.awaitOwn(o); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

// awaitOwn polls o.Addr until the process answers there (see spawn).
func (p *proc) awaitOwn(o redis.Options) error {
	o.DialTimeout, o.ReadTimeout, o.MaxRetries = 200*time.Millisecond, 500*time.Millisecond, -1
	rdb := redis.NewClient(&o)
	defer rdb.Close()
	own := fmt.Sprintf("process_id:%d\r\n", p.cmd.Process.Pid)
	deadline := time.Now().Add(setupDeadline)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			if log := p.out.String(); strings.Contains(log, "Address already in use") {
				return fmt.Errorf("redis-server on %s: %w", p.Addr, errPortTaken)
			}
			return fmt.Errorf("redis-server for %s exited; its log ends:\n%s", p.Addr, p.out.String())
		default:
		}
		// short: a process that took the port may accept and never answer, and
		// the exit of ours is seen only between polls
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		info, err := rdb.Info(ctx, "server").Result()
		cancel()
		if err == nil && strings.Contains(info, own) {
			return nil
		} else if err == nil {
			err = errors.New("another process answers there")
		}
		last = err
		time.Sleep(20 * time.Millisecond) // between polls of a real condition
	}
	return fmt.Errorf("redis-server on %s does not answer within %s (last error: %v)", p.Addr, setupDeadline, last)
}

// Kill kills the process (SIGKILL) and waits for it; idempotent.
func (p *proc) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.cmd = nil
}

// tail keeps the last tailMax bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - tailMax; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
