package vmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// gated is a Legacy go-sdk backend behind an HTTP middleware that answers
// 401 to every request whose bearer token is not one it accepts (none
// listed: it accepts everyone), and records every request: its kind
// ("initialize", "tools/call", "GET", "DELETE", ...) and header.
type gated struct {
	URL    string
	accept map[string]bool // bearer tokens served
	// verify, if set, decides instead of accept (outbound_test.go).
	verify atomic.Pointer[func(token string) bool]
	expire atomic.Bool // the next session POST gets 404 (the backend forgot the session)

	mu      sync.Mutex
	reqs    []seenRequest
	changed chan struct{} // closed and replaced on every request
}

type seenRequest struct {
	kind   string
	header http.Header
	served bool
}

func startGated(t *testing.T, name string, accept ...string) *gated {
	t.Helper()
	return startGatedMode(t, name, harness.Stateful, accept...)
}

// startGatedMode is startGated with a Modern-capable (Stateless) server too.
func startGatedMode(t *testing.T, name string, mode harness.Mode, accept ...string) *gated {
	t.Helper()
	return startGatedWith(t, name, mode, nil, accept...)
}

// startGatedWith is startGatedMode with setup (nil: none) adding to the
// server's tools, prompts and resources.
func startGatedWith(t *testing.T, name string, mode harness.Mode, setup func(*mcp.Server), accept ...string) *gated {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{name + "-" + r.Params.Argument.Value}}}, nil
		}})
	harness.AddEcho(srv, "secret")
	srv.AddPrompt(&mcp.Prompt{Name: name + "-prompt"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Description: name + " prompt"}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "doc://" + name, Name: name + "-doc"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: name + " doc"}}}, nil
	})
	if setup != nil {
		setup(srv)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: mode == harness.Stateless})
	g := &gated{accept: map[string]bool{}, changed: make(chan struct{})}
	for _, tok := range accept {
		g.accept[tok] = true
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		ok := len(g.accept) == 0 || g.accept[tok]
		if v := g.verify.Load(); v != nil {
			ok = (*v)(tok)
		}
		g.mu.Lock()
		g.reqs = append(g.reqs, seenRequest{kind: kind, header: r.Header.Clone(), served: ok})
		close(g.changed)
		g.changed = make(chan struct{})
		g.mu.Unlock()
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unknown user", http.StatusUnauthorized)
		case r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" && g.expire.CompareAndSwap(true, false):
			http.Error(w, "session not found", http.StatusNotFound)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	g.URL = hs.URL + "/mcp"
	return g
}

// requestKind is the JSON-RPC method of a POST, else the HTTP method.
func requestKind(r *http.Request) string {
	if r.Method != http.MethodPost {
		return r.Method
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == "" {
		return "response"
	}
	return m.Method
}

// await waits until at least n served requests of kind arrived.
func (g *gated) await(t *testing.T, kind string, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		g.mu.Lock()
		got, ch := 0, g.changed
		for _, r := range g.reqs {
			if r.served && r.kind == kind {
				got++
			}
		}
		g.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("backend saw %d served %s requests, want %d; saw %v", got, kind, n, g.values("Authorization"))
		}
	}
}

// bySession is, per backend Mcp-Session-Id, the Authorization values of
// the served requests that carried it.
func (g *gated) bySession() map[string][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string][]string{}
	for _, r := range g.reqs {
		if id := r.header.Get("Mcp-Session-Id"); id != "" && r.served {
			out[id] = append(out[id], r.header.Get("Authorization"))
		}
	}
	return out
}

// values is, per request kind (refused ones prefixed "refused "), the
// values of header name the backend saw, one per request ("" for none).
func (g *gated) values(name string) map[string][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string][]string{}
	for _, r := range g.reqs {
		k := r.kind
		if !r.served {
			k = "refused " + k
		}
		out[k] = append(out[k], r.header.Get(name))
	}
	return out
}

// only reports whether every value of every kind is want.
func only(values map[string][]string, want string) bool {
	for _, vs := range values {
		for _, v := range vs {
			if v != want {
				return false
			}
		}
	}
	return true
}

// backendStates is "name=state" per backend of a /readyz body.
func backendStates(body readyzBody) []string {
	var out []string
	for _, b := range body.Backends {
		out = append(out, b.Name+"="+string(b.State))
	}
	return out
}

// withHeader sets one header on every request, to the value it holds now.
type withHeader struct {
	name  string
	value *atomic.Pointer[string]
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, *h.value.Load())
	return http.DefaultTransport.RoundTrip(r)
}

// Before: a forwarded header reached the backend only on tools/call,
// resources/read and prompts/get; the backend session's initialize,
// notifications/initialized, its GET stream, the re-initialize after a 404
// and its DELETE went without it. Now every request of a client session's
// backend session carries that client session's latest value, and only
// its own.
func TestForwardHeadersReachEveryRequestOfTheClientsBackendSession(t *testing.T) {
	tenant := startGated(t, "tenant")
	v := harness.StartVMCP(t, nil, config.Backend{Name: "tenant", URL: tenant.URL,
		Transport: config.TransportStreamableHTTP, ForwardHeaders: []string{"X-Tenant"}})
	connectAs := func(value string) (*mcp.ClientSession, *atomic.Pointer[string]) {
		p := &atomic.Pointer[string]{}
		p.Store(&value)
		tr := &mcp.StreamableClientTransport{Endpoint: v.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: withHeader{"X-Tenant", p}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "creds-test", Version: "1"}, nil).Connect(ctx10(t), tr,
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		return cs, p
	}
	control := len(tenant.values("X-Tenant")["initialize"]) // vmcp's own connection
	require.True(t, only(tenant.values("X-Tenant"), ""), "vmcp's own connection forwards nothing")

	one, value := connectAs("t1")
	out, err := call(t, one, "tenant_secret")
	require.NoError(t, err)
	require.Equal(t, "secret:hi", out)
	tenant.await(t, "GET", 2) // the control connection's and the session's
	next := "t1b"
	value.Store(&next) // the client's later requests carry another value
	tenant.expire.Store(true)
	_, err = call(t, one, "tenant_secret") // 404: the request goes once more, on a new backend session
	require.NoError(t, err)
	require.NoError(t, one.Close())
	tenant.await(t, "DELETE", 2) // both backend sessions of the client session

	seen := tenant.values("X-Tenant")
	for kind, want := range map[string][]string{
		"initialize":                {"t1", "t1b"},
		"notifications/initialized": {"t1", "t1b"},
		"tools/call":                {"t1", "t1b", "t1b"},
		"DELETE":                    {"t1b", "t1b"},
	} {
		got := seen[kind]
		if kind == "initialize" || kind == "notifications/initialized" {
			require.Len(t, got, control+2, "%s: %v", kind, seen)
			got = got[control:]
		}
		assert.Equal(t, want, got, "%s carried the client session's latest X-Tenant", kind)
	}
	assert.Contains(t, seen["GET"], "t1", "the session's GET stream carried it: %v", seen["GET"])

	two, _ := connectAs("t2")
	_, err = call(t, two, "tenant_secret")
	require.NoError(t, err)
	assert.Equal(t, "t2", tenant.values("X-Tenant")["initialize"][control+2], "another client session sends its own value")
}
