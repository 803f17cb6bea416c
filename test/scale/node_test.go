package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vmcp/vmcp/pkg/cluster"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// nodeEnv names the environment variable that makes this test binary a
// vmcp node (nodeOptions as JSON) instead of running tests.
const nodeEnv = "VMCP_TEST_NODE"

// nodeStateKey is the mrtr.state_key every node of a test cluster shares.
const nodeStateKey = "scale-test-state-key-0123456789abcdef"

// nodeOptions configure one node process.
type nodeOptions struct {
	Name       string         `json:"name"`        // cluster.node_id
	RedisURL   string         `json:"redis_url"`   // cluster.redis_url
	Cluster    []string       `json:"cluster"`     // or cluster.redis_cluster
	BackendURL string         `json:"backend_url"` // the one backend, "echo" (streamable HTTP)
	Timing     cluster.Timing `json:"timing"`      // durations in nanoseconds
}

func TestMain(m *testing.M) {
	if v := os.Getenv(nodeEnv); v != "" {
		if err := runNode(v); err != nil {
			fmt.Fprintln(os.Stderr, "scale node:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runNode is a node process: vmcp on a loopback port with the options in
// spec; it prints "listening http://ADDR/mcp" once ready and serves until
// SIGINT/SIGTERM or until its stdin closes (the test ended).
func runNode(spec string) error {
	var o nodeOptions
	if err := json.Unmarshal([]byte(spec), &o); err != nil {
		return fmt.Errorf("%s: %w", nodeEnv, err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + lis.Addr().String()
	cfg := &config.Config{Listen: lis.Addr().String(), Backends: []config.Backend{{Name: "echo", URL: o.BackendURL, Transport: config.TransportStreamableHTTP}}}
	cfg.Cluster = config.Cluster{RedisURL: o.RedisURL, RedisCluster: o.Cluster, NodeID: o.Name, AdvertiseURL: base}
	cfg.MRTR.StateKey = nodeStateKey
	cfg.Aggregation = config.Aggregation{ConflictResolution: config.StrategyPriority, Priority: []string{"echo"}}
	cfg.ApplyDefaults()
	srv, err := vmcp.New(cfg, vmcp.Options{ClusterTiming: o.Timing, StartWait: 5 * time.Second})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	ready := make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for !srv.Ready() && ctx.Err() == nil {
			<-tick.C
		}
		fmt.Printf("listening %s%s\n", base, cfg.Path)
		close(ready)
	}()
	err = srv.Serve(ctx, lis, 5*time.Second)
	stop()
	<-ready
	return err
}

// node is a running node process.
type node struct {
	name  string
	url   string // its MCP endpoint
	host  string // host:port
	cmd   *exec.Cmd
	stdin io.Closer
	log   *lockedBuffer // its stderr
}

// startNodes starts one node process per name, in parallel, and stops
// them when the test ends (their stderr is logged if it failed).
func startNodes(t *testing.T, topo clustertest.Redis, backendURL string, timing cluster.Timing, names ...string) []*node {
	t.Helper()
	out := make([]*node, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { out[i], errs[i] = startNode(t, nodeOptions{name, topo.URL, topo.Cluster, backendURL, timing}) })
	}
	wg.Wait()
	t.Cleanup(func() { // in parallel: each may wait out its shutdown grace
		var wg sync.WaitGroup
		for _, n := range out {
			if n != nil {
				wg.Go(func() { n.stop(t) })
			}
		}
		wg.Wait()
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// startNode re-executes this test binary as a node and waits (20 s) for
// its "listening" line; the caller stops it.
func startNode(t *testing.T, o nodeOptions) (*node, error) {
	spec, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	n := &node{name: o.Name, log: &lockedBuffer{}}
	n.cmd = exec.Command(os.Args[0], "-test.run=^$")
	n.cmd.Env = append(os.Environ(), nodeEnv+"="+string(spec))
	n.cmd.Stderr = n.log
	if n.stdin, err = n.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := n.cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- u
			}
		}
	}()
	select {
	case n.url = <-lines:
		n.host = strings.TrimSuffix(strings.TrimPrefix(n.url, "http://"), "/mcp")
		return n, nil
	case <-time.After(20 * time.Second):
		n.stop(t)
		return nil, fmt.Errorf("node %s not ready within 20s: %s", o.Name, n.log)
	}
}

// stop asks the node to shut down (SIGINT), kills it after 10 s, and logs
// its stderr if the test failed.
func (n *node) stop(t *testing.T) {
	_ = n.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = n.cmd.Process.Kill()
		<-done
	}
	_ = n.stdin.Close()
	if t.Failed() {
		t.Logf("node %s stderr:\n%s", n.name, n.log)
	}
}

// lockedBuffer is an io.Writer safe for concurrent use, keeping the last
// 16 KiB.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if len(l.b) > 16<<10 {
		l.b = l.b[len(l.b)-16<<10:]
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
