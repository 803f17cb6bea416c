package vmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// userBackend is a token_exchange backend that serves each user (the sub
// of a valid token for vaultAud) a go-sdk server of its own, with one
// tool "lookup" whose description is that user's alone; any other token
// is 401.
type userBackend struct {
	URL   string
	check func(string) string

	mu  sync.Mutex
	srv map[string]*mcp.Server
}

func startUserBackend(t *testing.T, check func(string) string) *userBackend {
	t.Helper()
	return startUserBackendOn(t, check, false)
}

// startUserBackendOn is startUserBackend over streamable HTTP, or with
// sse over the HTTP+SSE transport.
func startUserBackendOn(t *testing.T, check func(string) string, sse bool) *userBackend {
	t.Helper()
	ub := &userBackend{check: check, srv: map[string]*mcp.Server{}}
	server := func(r *http.Request) *mcp.Server { return ub.server(ub.sub(r)) }
	var h http.Handler = mcp.NewStreamableHTTPHandler(server, nil)
	if sse {
		h = mcp.NewSSEHandler(server, nil)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ub.sub(r) == "" {
			http.Error(w, "unknown user", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	ub.URL = hs.URL
	return ub
}

func (ub *userBackend) sub(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ub.check(tok)
}

// server is sub's own server (its lookup described as "SUB v1" at first).
func (ub *userBackend) server(sub string) *mcp.Server {
	ub.mu.Lock()
	defer ub.mu.Unlock()
	s := ub.srv[sub]
	if s == nil {
		s = mcp.NewServer(&mcp.Implementation{Name: "vault", Version: "1"}, nil)
		addLookup(s, sub+" v1")
		ub.srv[sub] = s
	}
	return s
}

// define redefines sub's lookup: its server sends tools/list_changed on
// sub's backend sessions only.
func (ub *userBackend) define(sub, desc string) { addLookup(ub.server(sub), desc) }

func addLookup(s *mcp.Server, desc string) {
	s.AddTool(&mcp.Tool{Name: "lookup", Description: desc, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: desc}}}, nil
		})
}

// awaitGETs waits until sub's server has sessions whose standalone GET
// streams are connected (a progress probe, which vmcp counts undeliverable).
func (ub *userBackend) awaitGETs(t *testing.T, sub string) {
	t.Helper()
	s := ub.server(sub)
	require.Eventually(t, func() bool {
		n := 0
		for ss := range s.Sessions() {
			n++
			if ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: "probe", Progress: 1}) != nil {
				return false
			}
		}
		return n > 0
	}, 10*time.Second, 5*time.Millisecond, "%s's backend sessions' GET streams", sub)
}

// openBackend is a shared backend with a tool and a prompt (so it
// announces prompt changes).
func openBackend(t *testing.T) *harness.Backend {
	return harness.StartBackend(t, "open", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		addPrompt(s, "first")
	})
}

// userVMCP is a protected vmcp over open (shared) and vault (ub, token
// exchange), with security.tool_changes mode.
func userVMCP(t *testing.T, idp *devidp.IdP, open *harness.Backend, ub *userBackend, mode string, rules ...config.AuthzRule) *harness.VMCP {
	return harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience,
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
		c.Security.ToolChanges = mode
		if len(rules) > 0 {
			c.Authorization = &config.Authorization{Rules: rules}
		}
	}, open.Config(), config.Backend{Name: "vault", URL: ub.URL, Transport: config.TransportStreamableHTTP,
		Auth: &config.OutboundAuth{Type: config.OutboundTokenExchange, ClientID: "vmcp", ClientSecret: "vmcp-secret", Audience: vaultAud}})
}

// userClients connects alice and bob on both revisions (Legacy first,
// so the Modern discovery finds the same inventory), each recording its
// list_changed notifications, and waits for the Modern listen streams.
func userClients(t *testing.T, idp *devidp.IdP, v *harness.VMCP) (map[string]*mcp.ClientSession, map[string]chan string) {
	t.Helper()
	cs, got := map[string]*mcp.ClientSession{}, map[string]chan string{}
	for _, who := range []string{"alice", "bob"} {
		tok, err := idp.ClientToken(t.Context(), who, "")
		require.NoError(t, err)
		for _, rev := range []string{"legacy", "modern"} {
			ch := make(chan string, 16)
			c, _, err := connect(t, v.URL, tok, revisions[rev], notes(ch))
			require.NoError(t, err)
			cs[who+" "+rev], got[who+" "+rev] = c, ch
		}
	}
	require.Eventually(t, func() bool { return v.Server.ModernListens() == 2 }, 10*time.Second, 5*time.Millisecond,
		"the Modern clients' listen streams are open")
	return cs, got
}

// lookupDesc is the description of vault_lookup in cs's list ("" when
// not listed).
func lookupDesc(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	for tool, err := range cs.Tools(ctx10(t), nil) {
		require.NoError(t, err)
		if tool.Name == "vault_lookup" {
			return tool.Description
		}
	}
	return ""
}

// A per-principal backend redefining alice's tool told nobody: its
// list_changed on alice's backend session went unheard and alice's
// catalogue kept its first listing. Now alice's Legacy session and her
// Modern listen stream get tools/list_changed and list the new
// definition; bob's get nothing (the next list_changed they get is a
// later shared prompt change).
func TestPerPrincipalViewChangeSentNoListChanged(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub := startUserBackend(t, tokenChecker(t, idp, vaultAud))
	open := openBackend(t)
	v := userVMCP(t, idp, open, ub, config.ToolChangesWarn)
	cs, got := userClients(t, idp, v)
	for who, c := range cs {
		require.Equal(t, strings.Fields(who)[0]+" v1", lookupDesc(t, c), who)
	}
	ub.awaitGETs(t, "alice")

	ub.define("alice", "alice v2")
	for _, who := range []string{"alice legacy", "alice modern"} {
		require.Equal(t, "tools", next(t, got[who], who))
		assert.Equal(t, "alice v2", lookupDesc(t, cs[who]), who)
	}
	addPrompt(open.Server, "barrier") // a shared change every client hears of
	for who, ch := range got {
		require.Equal(t, "prompts", next(t, ch, who), "%s: the next list_changed is the shared one", who)
	}
	for _, who := range []string{"bob legacy", "bob modern"} {
		assert.Equal(t, "bob v1", lookupDesc(t, cs[who]), who)
	}
	for who, ch := range got {
		assert.Empty(t, ch, who)
	}
}

// Pins of a per-principal backend's tools were shared by name: under
// deny, bob's own definition of lookup differed from the one pinned at
// alice's listing and was withheld from bob as a "change". Each
// principal's tools are now pinned apart: both list their own; alice's
// redefined tool is withheld from alice alone (shown on /status with her
// tag), and accepting it lists it to her again on both revisions.
func TestPerPrincipalToolWithheldAsAnotherPrincipalsChange(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub := startUserBackend(t, tokenChecker(t, idp, vaultAud))
	open := openBackend(t)
	v := userVMCP(t, idp, open, ub, config.ToolChangesDeny)
	cs, got := userClients(t, idp, v)
	for who, c := range cs {
		require.Equal(t, strings.Fields(who)[0]+" v1", lookupDesc(t, c), "%s lists its own definition", who)
	}
	ub.awaitGETs(t, "alice")

	ub.define("alice", "alice v2 exfiltrates")
	for _, who := range []string{"alice legacy", "alice modern"} {
		require.Equal(t, "tools", next(t, got[who], who))
		assert.Empty(t, lookupDesc(t, cs[who]), "%s: the changed tool is withheld", who)
	}
	for _, who := range []string{"bob legacy", "bob modern"} {
		assert.Equal(t, "bob v1", lookupDesc(t, cs[who]), who)
	}
	tag := identity.Principal{Issuer: idp.Issuer(), Subject: "alice"}.Tag()
	changes := v.Server.Status().Catalogue.ToolChanges
	require.Len(t, changes, 1, "one pending change: alice's")
	assert.Equal(t, tag, changes[0].Principal)

	require.NoError(t, v.Server.AcceptToolChange("vault", "lookup"))
	for _, who := range []string{"alice legacy", "alice modern"} {
		require.Equal(t, "tools", next(t, got[who], who))
		assert.Equal(t, "alice v2 exfiltrates", lookupDesc(t, cs[who]), "%s: accepted", who)
	}
	for _, who := range []string{"bob legacy", "bob modern"} {
		assert.Empty(t, got[who], who)
	}
}

// Under authorization rules, a change of a principal's own inventory that
// its view hides (a tool no rule allows it) still sent its Modern listen
// stream tools/list_changed. Only kinds whose view changed are told now:
// the next list_changed alice's clients get, on both revisions, is a
// later shared prompt change.
func TestHiddenOwnInventoryChangeSentListChanged(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub := startUserBackend(t, tokenChecker(t, idp, vaultAud))
	open := openBackend(t)
	v := userVMCP(t, idp, open, ub, config.ToolChangesWarn,
		config.AuthzRule{Allow: &config.AuthzItems{Tools: []string{"open_*", "vault_lookup"}, Prompts: []string{"*"}}})
	cs, got := userClients(t, idp, v)
	for who, c := range cs {
		require.Equal(t, strings.Fields(who)[0]+" v1", lookupDesc(t, c), who)
	}
	ub.awaitGETs(t, "alice")

	alice := identity.Principal{Issuer: idp.Issuer(), Subject: "alice"}.Key()
	heard := make(chan aggregator.OwnerChange, 4)
	v.Server.OnOwnerChangeForTest(func(c aggregator.OwnerChange) { heard <- c })
	ub.server("alice").AddTool(&mcp.Tool{Name: "hidden", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	select { // the dispatchers acted on alice's change: her inventory has the tool, her view does not
	case c := <-heard:
		require.Equal(t, alice, c.Owner)
		require.Equal(t, []aggregator.Kind{aggregator.KindTools}, c.Kinds)
	case <-time.After(10 * time.Second):
		t.Fatal("alice's backend was not listed again")
	}
	addPrompt(open.Server, "barrier")
	for who, ch := range got {
		require.Equal(t, "prompts", next(t, ch, who), "%s: the next list_changed is the shared one", who)
		assert.Empty(t, ch, who)
	}
}
