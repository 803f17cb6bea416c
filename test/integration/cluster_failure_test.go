package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/test/integration/harness"
)

func TestClusterKilledNodeLosesItsSessionsOnly(t *testing.T) {
	clOnEachTopology(t, onKilledNodeLosesItsSessionsOnly)
}

func onKilledNodeLosesItsSessionsOnly(t *testing.T, topo clustertest.Redis) {
	e := clNewEnvTopo(t, topo, 3, true)
	doomed := e.nodes[2]
	// Each session is created on a chosen node, then used through the balancer.
	lb, _ := url.Parse(e.lb.URL)
	via := &http.Client{Transport: clVia{host: lb.Host}}
	lost := clConnect(t, doomed.url, clLegacy, true, via)
	kept := clConnect(t, e.nodes[0].url, clLegacy, true, via)
	require.Equal(t, doomed.name, e.owner(t, lost.cs.ID()))
	for range 3 {
		_, err := lost.echo(t, "before")
		require.NoError(t, err)
	}

	e.lb.markDown(doomed.name)
	// A dead node says no goodbye: its record stays. Its TTL (1.5 s) is
	// lifted while the node shuts down, which takes its time on a loaded
	// machine, and restored once the record is seen still there.
	doomed.cut.Cut()
	node := e.keys.Node(doomed.name)
	require.NoError(t, e.rdb.Persist(context.Background(), node).Err())
	doomed.stop()
	require.True(t, e.keyExists(t, node), "a dead node says no goodbye")
	require.NoError(t, e.rdb.PExpire(context.Background(), node, clTiming.NodeTTL).Err())

	_, err := lost.echo(t, "after")
	require.Error(t, err)
	require.True(t, errors.Is(err, mcp.ErrSessionMissing), "the dead node's session gets 404: %v", err)
	again := clConnect(t, e.lb.URL, clLegacy, true, nil) // the spec's recovery: initialize again
	got, err := again.echo(t, "again")
	require.NoError(t, err)
	require.Equal(t, "echo:again", got)

	got, err = kept.echo(t, "still")
	require.NoError(t, err, "other nodes' sessions are unaffected")
	require.Equal(t, "echo:still", got)
	harness.AddEcho(e.backend.Server, "post_mortem") // not clAddTool: the dead node's backend session has no GET stream any more
	kept.awaitListChanged(t, 1, stateWait)           // its GET stream may have to resume first

	require.Eventually(t, func() bool {
		return !e.keyExists(t, e.keys.Node(doomed.name)) && !e.keyExists(t, e.keys.Session(lost.cs.ID())) && !e.keyExists(t, e.keys.Events(lost.cs.ID()))
	}, stateWait, 50*time.Millisecond, "the dead node's records expire")
}

// clInitialize sends a raw Legacy initialize and returns status and body.
func clInitialize(t *testing.T, endpoint string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" { // end it, so nothing lingers
		del, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
		del.Header.Set("Mcp-Session-Id", id)
		if r, err := http.DefaultClient.Do(del); err == nil {
			r.Body.Close()
		}
	}
	return resp.StatusCode, string(b)
}

// clReady fetches a node's /readyz cluster state.
func clReady(t *testing.T, n *clNode) (int, string) {
	resp, err := http.Get(n.base + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Cluster struct {
			Redis string `json:"redis"`
		} `json:"cluster"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body.Cluster.Redis
}

func TestClusterRedisDownIs503AndRecovers(t *testing.T) {
	srv := clustertest.Start(t) // a private Redis this test may stop
	e := clNewEnvOn(t, clustertest.Redis{URL: srv.URL()}, "vmcp:", 2, false)
	c := clConnect(t, e.lb.URL, clLegacy, false, nil)
	_, err := c.echo(t, "up")
	require.NoError(t, err)

	srv.Stop()
	require.Eventually(t, func() bool {
		for _, n := range e.nodes {
			if code, _ := clReady(t, n); code != http.StatusServiceUnavailable {
				return false
			}
		}
		return true
	}, stateWait, 20*time.Millisecond, "readyz reports Redis down on every node")
	_, state := clReady(t, e.nodes[0])
	require.Contains(t, state, "Redis at "+srv.Addr)
	for range 2 { // both nodes
		code, body := clInitialize(t, e.lb.URL)
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Contains(t, body, "cluster state store (Redis) unavailable", "the message names Redis")
	}
	_, err = c.echo(t, "down")
	require.ErrorContains(t, err, "Service Unavailable", "a transient failure: the session stays usable")

	srv.Restart() // empty: Redis lost every record
	require.Eventually(t, func() bool {
		code, _ := clInitialize(t, e.lb.URL)
		return code == http.StatusOK
	}, stateWait, 50*time.Millisecond, "new sessions work again")
	require.Eventually(t, func() bool {
		got, err := c.echo(t, "back")
		return err == nil && got == "echo:back"
	}, stateWait, 50*time.Millisecond, "the existing session survived: its owner re-registered it")
	for range 4 { // through both nodes
		got, err := c.echo(t, "steady")
		require.NoError(t, err)
		require.Equal(t, "echo:steady", got)
	}
	fresh := clConnect(t, e.lb.URL, clLegacy, true, nil)
	got, err := fresh.echo(t, "fresh")
	require.NoError(t, err)
	require.Equal(t, "echo:fresh", got)
}

// clVia sends every request that carries a session ID to another node
// (the session is created on the first node, then used through the other).
type clVia struct{ host string }

func (v clVia) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Mcp-Session-Id") != "" {
		r = r.Clone(r.Context())
		r.URL.Host, r.Host = v.host, v.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

// BenchmarkForwardedVsLocal: a Legacy tools/call sent to the session's
// owner node directly, and through another node that forwards it. The
// difference of the two ns/op is the latency forwarding adds.
func BenchmarkForwardedVsLocal(b *testing.B) {
	e := clNewEnv(b, 2, false)
	owner, other := e.nodes[0], e.nodes[1]
	u, _ := url.Parse(other.base)
	clients := map[string]*clClient{
		"local":     clConnect(b, owner.url, clLegacy, false, nil),
		"forwarded": clConnect(b, owner.url, clLegacy, false, &http.Client{Transport: clVia{host: u.Host}}),
	}
	for _, name := range []string{"local", "forwarded"} {
		c := clients[name]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			p := &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": "x"}}
			for b.Loop() {
				if _, err := c.cs.CallTool(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// Interleaved, so machine noise hits both alike: reports each path's
	// mean and the difference (the latency forwarding adds).
	b.Run("interleaved", func(b *testing.B) {
		ctx := context.Background()
		p := &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": "x"}}
		var local, fwd time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := clients["local"].cs.CallTool(ctx, p); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			if _, err := clients["forwarded"].cs.CallTool(ctx, p); err != nil {
				b.Fatal(err)
			}
			local, fwd = local+mid.Sub(start), fwd+time.Since(mid)
		}
		n := float64(b.N)
		b.ReportMetric(float64(local.Microseconds())/n, "local-µs/call")
		b.ReportMetric(float64(fwd.Microseconds())/n, "forwarded-µs/call")
		b.ReportMetric(float64((fwd-local).Microseconds())/n, "added-µs/call")
	})
	if owner.srv.SessionCount() != 2 || other.srv.SessionCount() != 0 {
		b.Fatalf("sessions: owner %d, other %d", owner.srv.SessionCount(), other.srv.SessionCount())
	}
}
