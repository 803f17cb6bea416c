package vmcp_test

import (
	"bytes"
	"context"
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
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// startModernUserBackend is startUserBackend as a stateless (Modern)
// server: it keeps no session, so its list_changed reach vmcp only on a
// subscriptions/listen. live counts each user's open listens.
func startModernUserBackend(t *testing.T, check func(string) string) (*userBackend, func(sub string) int) {
	t.Helper()
	ub := &userBackend{check: check, srv: map[string]*mcp.Server{}}
	var mu sync.Mutex
	live := map[string]int{}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return ub.server(ub.sub(r)) },
		&mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub := ub.sub(r)
		if sub == "" {
			http.Error(w, "unknown user", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			mu.Lock()
			live[sub]++
			mu.Unlock()
			defer func() {
				mu.Lock()
				live[sub]--
				mu.Unlock()
			}()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	ub.URL = hs.URL
	return ub, func(sub string) int {
		mu.Lock()
		defer mu.Unlock()
		return live[sub]
	}
}

// TestModernPerPrincipalBackendListChangedWasNotHeard pins a per-principal
// backend that keeps no session (Modern): it sends list_changed only on a
// listen, and vmcp held none for a principal. alice's Legacy session
// (whose backend session is Modern) never heard her tool redefined, and
// her Modern listen stream only at her next re-discovery (minutes later).
// Now each holds a listen with alice's credential: both get
// tools/list_changed and list the new definition; bob's clients get
// nothing (the next list_changed they get is a later shared prompt
// change) and keep bob's own definition.
func TestModernPerPrincipalBackendListChangedWasNotHeard(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub, live := startModernUserBackend(t, tokenChecker(t, idp, vaultAud))
	open := openBackend(t)
	v := userVMCP(t, idp, open, ub, config.ToolChangesWarn)
	cs, got := userClients(t, idp, v)
	for who, c := range cs {
		require.Equal(t, strings.Fields(who)[0]+" v1", lookupDesc(t, c), who)
	}
	assert.Eventually(t, func() bool { return live("alice") == 2 && live("bob") == 2 }, 10*time.Second, 5*time.Millisecond,
		"a listen per Legacy session and per Modern listen stream, each with its own principal's credential")

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
	for who, c := range cs {
		require.NoError(t, c.Close(), who)
	}
	require.Eventually(t, func() bool { return live("alice") == 0 && live("bob") == 0 }, 10*time.Second, 5*time.Millisecond,
		"the listens end with their sessions and streams")
}

// startDocBackend is a per-user backend (a Legacy one keeping sessions,
// or a stateless Modern one) whose servers each serve doc://note and
// accept resource subscriptions; srv gives a user's server, held the
// user's subscriptions held: on Legacy its resources/subscribe less its
// unsubscribes, on Modern its open listens naming doc://note.
func startDocBackend(t *testing.T, check func(string) string, modern bool) (url string, srv func(sub string) *mcp.Server, held func(sub string) int) {
	t.Helper()
	var mu sync.Mutex
	servers, count := map[string]*mcp.Server{}, map[string]int{}
	add := func(sub string, d int) { mu.Lock(); count[sub] += d; mu.Unlock() }
	subscribed := func(sub string, d int) { // a listen's resources reach the handlers too: counted per listen
		if !modern {
			add(sub, d)
		}
	}
	held = func(sub string) int { mu.Lock(); defer mu.Unlock(); return count[sub] }
	srv = func(sub string) *mcp.Server {
		mu.Lock()
		defer mu.Unlock()
		if s := servers[sub]; s != nil {
			return s
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "vault", Version: "1"}, &mcp.ServerOptions{
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { subscribed(sub, 1); return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { subscribed(sub, -1); return nil }})
		s.AddResource(&mcp.Resource{URI: "doc://note", Name: "note"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: sub}}}, nil
		})
		servers[sub] = s
		return s
	}
	who := func(r *http.Request) string {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return check(tok)
	}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return srv(who(r)) }, &mcp.StreamableHTTPOptions{Stateless: modern})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub := who(r)
		if sub == "" {
			http.Error(w, "unknown user", http.StatusUnauthorized)
			return
		}
		if modern && r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte("doc://note")) {
				add(sub, 1)
				defer add(sub, -1)
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL, srv, held
}

// docVMCP is a protected vmcp over open (shared) and vault at url (token
// exchange).
func docVMCP(t *testing.T, idp *devidp.IdP, open *harness.Backend, url string) *harness.VMCP {
	return harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience,
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}, open.Config(), config.Backend{Name: "vault", URL: url, Transport: config.TransportStreamableHTTP,
		Auth: &config.OutboundAuth{Type: config.OutboundTokenExchange, ClientID: "vmcp", ClientSecret: "vmcp-secret", Audience: vaultAud}})
}

// TestModernPerPrincipalResourceSubscriptionWasNotHonored pins a Modern
// listen asking for a resource of a per-principal backend: vmcp's shared
// subscriptions need a control connection, which such a backend has none
// of, so the URI was never honored (and a shared one would have mixed
// principals). Now each stream holds a listen with its own principal's
// credential: alice's and bob's streams are both granted doc://note, and
// each hears only the updates of its own server.
func TestModernPerPrincipalResourceSubscriptionWasNotHonored(t *testing.T) {
	modernDocSubscriptionsStayApart(t, true)
}

// modernDocSubscriptionsStayApart: alice's and bob's Modern clients
// subscribe to doc://note of a per-principal backend (stateless Modern,
// or keeping Legacy sessions); each principal's stream holds its own
// subscription there and hears only its own server's updates.
func modernDocSubscriptionsStayApart(t *testing.T, modern bool) {
	idp := outboundIdP(t, func(string) bool { return false })
	url, srv, held := startDocBackend(t, tokenChecker(t, idp, vaultAud), modern)
	v := docVMCP(t, idp, openBackend(t), url)
	got := map[string]chan string{}
	for _, who := range []string{"alice", "bob"} {
		_, got[who] = docSubscriber(t, idp, v.URL, "modern", who)
	}
	require.Eventually(t, func() bool { return held("alice") == 1 && held("bob") == 1 }, 10*time.Second, 5*time.Millisecond,
		"each principal's stream holds its own subscription on the backend, with its own token")
	heardUpdate(t, srv("alice"), got["alice"], "alice")
	assert.Empty(t, got["bob"], "bob heard alice's update") // none of bob's was sent yet
	heardUpdate(t, srv("bob"), got["bob"], "bob")
}

// A Legacy client's resource subscription on a per-principal backend
// that keeps no session is a listen with the subscriber's own credential,
// held by its session (upstream.Core.Subscription; before, the go-sdk
// client's own listen, which behaved the same here): alice and bob both
// subscribe to doc://note and each hears only the updates of their own
// server, never the other's, and bob's unsubscribe ends only his.
func TestLegacyPerPrincipalResourceSubscriptionsStayApart(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	url, srv, _ := startDocBackend(t, tokenChecker(t, idp, vaultAud), true)
	v := docVMCP(t, idp, openBackend(t), url)
	got := map[string]chan string{}
	cs := map[string]*mcp.ClientSession{}
	for _, who := range []string{"alice", "bob"} {
		cs[who], got[who] = docSubscriber(t, idp, v.URL, "legacy", who)
	}
	for _, who := range []string{"alice", "bob", "alice"} {
		require.NoError(t, srv(who).ResourceUpdated(ctx10(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://note"}))
	}
	for who, n := range map[string]int{"alice": 2, "bob": 1} {
		for range n {
			assert.Equal(t, "doc://note", updated(t, got[who], who), who)
		}
	}
	require.NoError(t, cs["bob"].Unsubscribe(ctx10(t), &mcp.UnsubscribeParams{URI: "doc://note"}))
	require.NoError(t, srv("alice").ResourceUpdated(ctx10(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://note"}))
	require.Equal(t, "doc://note", updated(t, got["alice"], "alice"))
	assert.Empty(t, got["bob"], "bob heard alice's update")
}

// updated waits (10 s at most) for a resources/updated URI on ch.
func updated(t *testing.T, ch chan string, who string) string {
	t.Helper()
	select {
	case uri := <-ch:
		return uri
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not told of its own update", who)
		return ""
	}
}
