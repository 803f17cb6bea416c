package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Benchmarks of one proxied tools/call and one full tools/list walk, in
// process: a go-sdk client, vmcp (priority strategy, so names stay bare)
// and a go-sdk backend on loopback HTTP. allocs/op and B/op count all
// three; the ViaVMCP benchmarks also run the same number of direct calls
// and report the difference as vmcp-allocs/op and vmcp-B/op, vmcp's own
// share of one proxied call. make bench (test/bench) measures the same
// with every party in its own process.

// benchTools is the number of filler tools of the list walk (plus echo).
const benchTools = 200

// benchPageSize is the page size of backend and vmcp lists in the walk.
const benchPageSize = 50

var benchParams = &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello, vmcp"}}

// benchEnv is a backend and vmcp over it, with one session to each.
type benchEnv struct {
	direct, via *mcp.ClientSession
}

// newBenchEnv starts a backend (stateful for Legacy clients, stateless for
// Modern ones) and vmcp, and connects one client session to each.
func newBenchEnv(b *testing.B, modern bool) *benchEnv {
	b.Helper()
	version := legacy
	if modern {
		version = ""
	}
	be := startBenchBackend(b, modern)
	v := harness.StartVMCP(b, func(c *config.Config) {
		c.Aggregation.ConflictResolution = config.StrategyPriority
		c.Pagination.PageSize = benchPageSize
	}, be)
	return &benchEnv{direct: benchConnect(b, be.URL, version), via: benchConnect(b, v.URL, version)}
}

// startBenchBackend serves echo (returning its text) and benchTools filler
// tools, benchPageSize per page, statefully or statelessly.
func startBenchBackend(b *testing.B, stateless bool) config.Backend {
	b.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "bench"}, &mcp.ServerOptions{PageSize: benchPageSize})
	harness.AddTools(srv, "tool", benchTools)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	b.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return config.Backend{Name: "echo", URL: hs.URL, Transport: config.TransportStreamableHTTP}
}

// benchConnect opens a client session on its own pooled HTTP transport
// (room for parallel benchmarks' connections).
func benchConnect(b *testing.B, url, version string) *mcp.ClientSession {
	b.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// benchCall is one echo call on a long-lived context (cancelling a go-sdk
// call's context at once would close its connection about one call in five).
func benchCall(b *testing.B, cs *mcp.ClientSession) {
	res, err := cs.CallTool(context.Background(), benchParams)
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		b.Fatalf("unexpected result %+v", res)
	}
}

// benchMallocs runs f n times and returns the process's allocations and bytes.
func benchMallocs(n int, f func()) (uint64, uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
}

func benchCallDirect(b *testing.B, modern bool) {
	env := newBenchEnv(b, modern)
	benchCall(b, env.direct)
	b.ReportAllocs()
	for b.Loop() {
		benchCall(b, env.direct)
	}
}

func benchCallViaVMCP(b *testing.B, modern bool) {
	env := newBenchEnv(b, modern)
	benchCall(b, env.direct)
	benchCall(b, env.via)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		benchCall(b, env.via)
		n++
	}
	b.StopTimer()
	// vmcp's share: the same number of calls directly, subtracted.
	va, vb := benchMallocs(n, func() { benchCall(b, env.via) })
	da, db := benchMallocs(n, func() { benchCall(b, env.direct) })
	b.ReportMetric(float64(int64(va)-int64(da))/float64(n), "vmcp-allocs/op")
	b.ReportMetric(float64(int64(vb)-int64(db))/float64(n), "vmcp-B/op")
}

// BenchmarkLegacyCallDirect: a 2025-11-25 client calls a stateful backend.
func BenchmarkLegacyCallDirect(b *testing.B) { benchCallDirect(b, false) }

// BenchmarkLegacyCallViaVMCP: the same call through vmcp (Legacy dispatcher,
// the client's own backend session).
func BenchmarkLegacyCallViaVMCP(b *testing.B) { benchCallViaVMCP(b, false) }

// BenchmarkModernCallDirect: a default (2026-07-28) client calls a
// stateless backend.
func BenchmarkModernCallDirect(b *testing.B) { benchCallDirect(b, true) }

// BenchmarkModernCallViaVMCP: the same call through vmcp (Modern dispatcher,
// the backend's shared connection).
func BenchmarkModernCallViaVMCP(b *testing.B) { benchCallViaVMCP(b, true) }

// BenchmarkModernCallViaVMCPParallel: concurrent calls through vmcp from
// one Modern client session (the shared backend connection under load).
func BenchmarkModernCallViaVMCPParallel(b *testing.B) {
	env := newBenchEnv(b, true)
	benchCall(b, env.via)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchCall(b, env.via)
		}
	})
}

// BenchmarkToolsListWalk walks every page of tools/list (201 tools, 50 per
// page), directly and through vmcp, for both eras.
func BenchmarkToolsListWalk(b *testing.B) {
	for _, era := range []struct {
		name   string
		modern bool
	}{{"legacy", false}, {"modern", true}} {
		b.Run(era.name, func(b *testing.B) {
			env := newBenchEnv(b, era.modern)
			for _, t := range []struct {
				name string
				cs   *mcp.ClientSession
			}{{"direct", env.direct}, {"vmcp", env.via}} {
				b.Run(t.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						n := 0
						for _, err := range t.cs.Tools(context.Background(), nil) {
							if err != nil {
								b.Fatal(err)
							}
							n++
						}
						if n != benchTools+1 {
							b.Fatalf("walk saw %d tools, want %d", n, benchTools+1)
						}
					}
				})
			}
		})
	}
}
