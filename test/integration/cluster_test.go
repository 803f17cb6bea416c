package integration

// Cluster tests: three vmcp nodes on loopback ports, coordinated through
// Redis (clustertest: the shared one, or a private redis-server), behind a
// round-robin load balancer that knows nothing about MCP sessions, so
// consecutive requests of one session land on different nodes.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// clTiming shortens the cluster's periods so expiry shows within seconds.
var clTiming = cluster.Timing{
	Heartbeat:    200 * time.Millisecond,
	NodeTTL:      1500 * time.Millisecond,
	SessionTTL:   1500 * time.Millisecond,
	StreamPing:   333 * time.Millisecond,
	OpTimeout:    5 * time.Second, // Redis is local: a longer operation is a starved machine, not Redis down
	Probe:        100 * time.Millisecond,
	DialTimeout:  500 * time.Millisecond,
	WriteTimeout: 2 * time.Second,
}

// clLegacy is the Legacy revision the cluster tests pin.
const clLegacy = "2025-11-25"

// clStateKey is the mrtr.state_key every node of a test cluster shares.
const clStateKey = "cluster-test-state-key-0123456789abcdef"

// clNode is one vmcp node on a loopback port.
type clNode struct {
	name string
	base string // http://127.0.0.1:PORT
	url  string // the MCP endpoint
	srv  *vmcp.Server
	hs   *http.Server
	cut  *clustertest.Cutter // dials its Redis connections, when it may be killed
	once sync.Once

	forwarded atomic.Int64 // requests another node forwarded here
}

// clStartNode starts node name on the Redis topo under prefix; with
// killable its Redis connections can be cut (n.cut: then stop is a death
// without a goodbye).
func clStartNode(t testing.TB, name string, topo clustertest.Redis, prefix string, killable bool, backends ...config.Backend) *clNode {
	t.Helper()
	return clStartNodeWith(t, name, topo, prefix, killable, nil, backends...)
}

// clStartNodeWith is clStartNode with mutate (may be nil) editing the
// node's config after defaults.
func clStartNodeWith(t testing.TB, name string, topo clustertest.Redis, prefix string, killable bool, mutate func(*config.Config), backends ...config.Backend) *clNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n := &clNode{name: name, base: "http://" + ln.Addr().String()}
	opts := vmcp.Options{ClusterTiming: clTiming, StartWait: 5 * time.Second}
	if killable {
		n.cut = &clustertest.Cutter{}
		opts.ClusterRedisDialer = n.cut.Dial
	}
	cfg := &config.Config{Listen: ln.Addr().String(), Backends: backends}
	cfg.Cluster = clClusterConfig(topo)
	cfg.Cluster.NodeID, cfg.Cluster.AdvertiseURL, cfg.Cluster.KeyPrefix = name, n.base, prefix
	cfg.MRTR.StateKey = clStateKey
	cfg.ApplyDefaults()
	if mutate != nil {
		mutate(cfg)
	}
	n.url = n.base + cfg.Path
	diag := clDiagFor(t)
	opts.Logger = diag.logger(name)
	n.srv, err = vmcp.New(cfg, opts)
	require.NoError(t, err)
	h := n.srv.Handler()
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cluster.Forwarded(r) {
			n.forwarded.Add(1)
		}
		h.ServeHTTP(w, r)
	})
	n.hs = &http.Server{Handler: count, ReadHeaderTimeout: 10 * time.Second, ErrorLog: diag.errorLog("http server " + name)}
	go func() { _ = n.hs.Serve(ln) }()
	t.Cleanup(n.stop)
	require.Eventually(t, n.srv.Ready, stateWait, 10*time.Millisecond, "node %s has no backend", name)
	return n
}

// stop shuts the node down: connections are cut, sessions end and the
// node leaves the cluster (its Redis records are removed).
func (n *clNode) stop() {
	n.once.Do(func() {
		_ = n.hs.Close()
		_ = n.srv.Close()
	})
}

// clEnv is a test cluster: one backend, nodes, the balancer and Redis.
type clEnv struct {
	backend *harness.Backend
	nodes   []*clNode
	lb      *clBalancer
	rdb     redis.UniversalClient
	keys    cluster.Keys
}

// clNewEnv starts n nodes (the last one killable when killable) on the
// shared test Redis under a fresh prefix, and a balancer over them.
func clNewEnv(t testing.TB, n int, killable bool) *clEnv {
	t.Helper()
	topo := clustertest.Standalone(t)
	return clNewEnvOn(t, topo, topo.Prefix(t), n, killable)
}

func clNewEnvOn(t testing.TB, topo clustertest.Redis, prefix string, n int, killable bool) *clEnv {
	t.Helper()
	e := &clEnv{backend: clBackend(t), rdb: topo.Client(t), keys: cluster.KeysFor(clRedisOf(topo), prefix)}
	for i := range n {
		e.nodes = append(e.nodes, clStartNode(t, fmt.Sprintf("n%d", i+1), topo, prefix, killable && i == n-1, e.backend.Config()))
	}
	e.lb = clStartBalancer(t, e.nodes...)
	return e
}

// owner is the node named in Redis as the owner of session ("" if none).
func (e *clEnv) owner(t testing.TB, session string) string {
	v, err := e.rdb.Get(context.Background(), e.keys.Session(session)).Result()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	return v
}

// keyExists reports whether a Redis key of the cluster exists (e.keys names it).
func (e *clEnv) keyExists(t testing.TB, key string) bool {
	n, err := e.rdb.Exists(context.Background(), key).Result()
	require.NoError(t, err)
	return n == 1
}

// clBackend is a Legacy backend with echo, a progress tool and an
// elicitation tool; tools added later trigger list_changed.
func clBackend(t testing.TB) *harness.Backend {
	return harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		s.AddTool(&mcp.Tool{Name: "steps", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := 1; i <= 3; i++ {
					p := &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3}
					if err := req.Session.NotifyProgress(ctx, p); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stepped"}}}, nil
			})
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
					"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
				}})
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", res.Content["name"])}}}, nil
			})
	})
}

// clAddTool adds a tool to the backend at run time (list_changed), once
// every node's GET stream to the backend is connected (before, the
// go-sdk drops the notification and no node hears of the change).
func clAddTool(t *testing.T, e *clEnv, name string) {
	t.Helper()
	e.backend.AwaitGETStreams(t, stateWait)
	harness.AddEcho(e.backend.Server, name)
}

func TestClusterLegacyFullFlowThroughBalancer(t *testing.T) {
	clOnEachTopology(t, onLegacyFullFlowThroughBalancer)
}

func onLegacyFullFlowThroughBalancer(t *testing.T, topo clustertest.Redis) {
	e := clNewEnvTopo(t, topo, 3, false)
	c := clConnect(t, e.lb.URL, clLegacy, true, nil)
	id := c.cs.ID()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	names := harness.ToolNames(t, c.cs)
	require.Subset(t, names, []string{"alpha_echo", "alpha_steps", "alpha_ask"})
	got, err := c.echo(t, "hi")
	require.NoError(t, err)
	require.Equal(t, "echo:hi", got)

	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_steps", Meta: mcp.Meta{"progressToken": "tok"}})
	require.NoError(t, err)
	require.Equal(t, "stepped", harness.Text(t, res))
	for want := 1.0; want <= 3; want++ {
		select {
		case p := <-c.progress:
			require.Equal(t, want, p)
		case <-time.After(stateWait):
			t.Fatalf("progress %v missing", want)
		}
	}

	res, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_ask"})
	require.NoError(t, err)
	require.Equal(t, "hello ada", harness.Text(t, res), "elicitation answered through another node")

	// list_changed on the GET stream (opened through some node, served by the owner).
	clAddTool(t, e, "late")
	c.awaitListChanged(t, 1, stateWait)

	// The GET stream drops; while the client is away another list_changed
	// is sent; the client resumes with Last-Event-ID on another node and
	// gets exactly that one.
	e.lb.cutStreams()
	clAddTool(t, e, "later")
	c.awaitListChanged(t, 1, stateWait)
	c.noMore(t, 500*time.Millisecond)

	owner := e.owner(t, id)
	hops := e.lb.hopsOf(id)
	nodes := map[string]bool{}
	forwarded, resumed := 0, false
	var prevGET string
	for _, h := range hops {
		nodes[h.node] = true
		if h.node != owner {
			forwarded++
		}
		if h.method == http.MethodGet {
			if h.lastEventID != "" && prevGET != "" && h.node != prevGET {
				resumed = true
			}
			prevGET = h.node
		}
	}
	require.Len(t, nodes, 3, "the session's requests landed on every node: %+v", hops)
	require.NotZero(t, forwarded, "some requests were sent to other nodes than the owner %s", owner)
	require.NotZero(t, e.forwardedTotal(), "and forwarded by them to the owner")
	require.True(t, resumed, "the GET stream resumed with Last-Event-ID on another node: %+v", hops)

	// DELETE (through the balancer): the owner ends the session and its
	// records and event log are removed.
	require.NoError(t, c.cs.Close())
	require.Eventually(t, func() bool {
		return !e.keyExists(t, e.keys.Session(id)) && !e.keyExists(t, e.keys.Events(id))
	}, stateWait, 20*time.Millisecond)
	require.True(t, slices.ContainsFunc(e.lb.hopsOf(id), func(h clHop) bool { return h.method == http.MethodDelete }))
	for _, n := range e.nodes {
		require.Zero(t, n.srv.SessionCount(), "node %s", n.name)
	}
}

func TestClusterModernClientThroughBalancer(t *testing.T) {
	e := clNewEnv(t, 3, false)
	c := clConnect(t, e.lb.URL, "", false, nil)
	t.Logf("default client negotiated %s", c.cs.InitializeResult().ProtocolVersion)
	require.Subset(t, harness.ToolNames(t, c.cs), []string{"alpha_echo", "alpha_steps", "alpha_ask"})
	for i := range 6 { // round robin: every node serves some
		got, err := c.echo(t, fmt.Sprint(i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("echo:%d", i), got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_steps", Meta: mcp.Meta{"progressToken": "tok"}})
	require.NoError(t, err)
	require.Equal(t, "stepped", harness.Text(t, res)) // (the Modern dispatcher does not relay progress yet)

	// Elicitation is a multi round-trip call: the retry lands on another
	// node, which forwards it to the node where the call is parked.
	before := e.forwardedTotal()
	res, err = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_ask"})
	require.NoError(t, err)
	require.Equal(t, "hello ada", harness.Text(t, res))
	require.Greater(t, e.forwardedTotal(), before, "the retry was forwarded to the parking node")
}

// forwardedTotal counts the requests nodes received forwarded by others.
func (e *clEnv) forwardedTotal() int64 {
	var n int64
	for _, node := range e.nodes {
		n += node.forwarded.Load()
	}
	return n
}

// Every node refreshes its own catalogue and notifies its own sessions:
// list_changed reaches clients whose sessions live on each node.
func TestClusterListChangedReachesClientsOnEveryNode(t *testing.T) {
	clOnEachTopology(t, onListChangedReachesClientsOnEveryNode)
}

func onListChangedReachesClientsOnEveryNode(t *testing.T, topo clustertest.Redis) {
	e := clNewEnvTopo(t, topo, 3, false)
	var clients []*clClient
	for _, n := range e.nodes {
		c := clConnect(t, n.url, clLegacy, true, nil)
		require.Equal(t, n.name, e.owner(t, c.cs.ID()))
		clients = append(clients, c)
	}
	clAddTool(t, e, "fresh")
	for _, c := range clients {
		c.awaitListChanged(t, 1, stateWait)
	}
}
