package vmcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// gated is a Legacy go-sdk backend behind an HTTP middleware that answers
// 401 to every request whose bearer token is not one it accepts, and
// counts what it served per request kind ("initialize", "tools/call",
// "GET", "DELETE", ...) and the Authorization values it saw.
type gated struct {
	URL    string
	accept map[string]bool // bearer tokens served

	mu       sync.Mutex
	served   map[string]int // by kind, accepted requests only
	refused  int            // 401s
	sawAuth  map[string]bool
	changed  chan struct{} // closed and replaced on every request
	noTokens int           // requests without Authorization
}

func startGated(t *testing.T, name string, accept ...string) *gated {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	harness.AddEcho(srv, "secret")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	g := &gated{accept: map[string]bool{}, served: map[string]int{}, sawAuth: map[string]bool{}, changed: make(chan struct{})}
	for _, tok := range accept {
		g.accept[tok] = true
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		auth := r.Header.Get("Authorization")
		tok, _ := strings.CutPrefix(auth, "Bearer ")
		g.mu.Lock()
		if auth == "" {
			g.noTokens++
		} else {
			g.sawAuth[auth] = true
		}
		ok := len(g.accept) == 0 || g.accept[tok]
		if ok {
			g.served[kind]++
		} else {
			g.refused++
		}
		close(g.changed)
		g.changed = make(chan struct{})
		g.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unknown user", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
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

// await waits until cond holds on g's counts (checked on every request).
func (g *gated) await(t *testing.T, what string, cond func(served map[string]int) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		g.mu.Lock()
		ok, ch := cond(g.served), g.changed
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			g.mu.Lock()
			defer g.mu.Unlock()
			t.Fatalf("backend never saw %s; served %v", what, g.served)
		}
	}
}

func (g *gated) counts() (served map[string]int, refused, noTokens int, auths map[string]bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	served = map[string]int{}
	for k, v := range g.served {
		served[k] = v
	}
	auths = map[string]bool{}
	for k, v := range g.sawAuth {
		auths[k] = v
	}
	return served, g.refused, g.noTokens, auths
}

// credsVMCP is a protected vmcp over an ordinary backend (open: accepts
// anything) and vault, which forwards Authorization and so takes each
// user's credential.
func credsVMCP(t *testing.T, idp *authtest.IdP, open, vault *gated) *harness.VMCP {
	return harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	},
		config.Backend{Name: "open", URL: open.URL, Transport: config.TransportStreamableHTTP},
		config.Backend{Name: "vault", URL: vault.URL, Transport: config.TransportStreamableHTTP, ForwardHeaders: []string{"Authorization"}})
}

// Before: forward_headers reached a backend only on tools/call,
// resources/read and prompts/get, and a backend that requires the user's
// token never came up (its catalogue was built on vmcp's own connection,
// which got 401). Now it is discovered per principal: its tools appear for
// the user whose token it accepts, work, and carry that token on every
// request (initialize, GET, call, DELETE); another user neither sees nor
// calls them, and the ordinary backend never sees anyone's token.
func TestPerUserBackendIsDiscoveredAndUsedWithThatUsersTokenOnly(t *testing.T) {
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			idp := authtest.Start(t, audience)
			tokA, tokB := idp.Token(t, "alice", "mcp:tools"), idp.Token(t, "bob", "mcp:tools")
			open, vault := startGated(t, "open"), startGated(t, "vault", tokA)
			v := credsVMCP(t, idp, open, vault)

			code, body := readyz(t, v.Base)
			require.Equal(t, http.StatusOK, code, "a per-user backend does not block readiness")
			require.Contains(t, backendStates(body), "vault=per-principal")

			a, _, err := connect(t, v.URL, tokA, version, nil)
			require.NoError(t, err)
			served, refused, _, _ := vault.counts()
			require.Equal(t, []string{"open_secret", "vault_secret"}, harness.ToolNames(t, a), "served %v refused %d", served, refused)
			out, err := call(t, a, "vault_secret")
			require.NoError(t, err)
			require.Equal(t, "secret:hi", out)

			b, _, err := connect(t, v.URL, tokB, version, nil)
			require.NoError(t, err)
			require.Equal(t, []string{"open_secret"}, harness.ToolNames(t, b), "bob does not see alice's backend")
			_, hidden := call(t, b, "vault_secret")
			_, unknown := call(t, b, "vault_nosuch")
			require.Error(t, hidden)
			require.Equal(t, strings.ReplaceAll(rpcErr(t, unknown).Message, "vault_nosuch", "vault_secret"), rpcErr(t, hidden).Message,
				"the same error as an unknown tool")
			require.Equal(t, rpcErr(t, unknown).Code, rpcErr(t, hidden).Code)

			vault.await(t, "alice's GET stream", func(s map[string]int) bool { return s["GET"] > 0 })
			require.NoError(t, a.Close())
			vault.await(t, "alice's DELETE", func(s map[string]int) bool { return s["DELETE"] > 0 })
			served, _, noTokens, auths := vault.counts()
			for _, kind := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call", "GET", "DELETE"} {
				assert.Positive(t, served[kind], "vault saw alice's token on %s (served %v)", kind, served)
			}
			assert.Zero(t, noTokens, "vmcp never called vault without a user's token")
			assert.Equal(t, map[string]bool{"Bearer " + tokA: true, "Bearer " + tokB: true}, auths, "only the users' own tokens")
			_, _, _, openAuths := open.counts()
			assert.Empty(t, openAuths, "a backend not configured for it never gets the client's Authorization")
		})
	}
}

// backendStates is "name=state" per backend of a /readyz body.
func backendStates(body readyzBody) []string {
	var out []string
	for _, b := range body.Backends {
		out = append(out, b.Name+"="+string(b.State))
	}
	return out
}
