package vmcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A per-principal backend that keeps Legacy sessions sends list_changed
// and resources/updated only on a session's GET stream; a Modern client's
// listen stream had no backend session, so it heard neither (list
// changes only at its principal's next re-discovery, minutes later) and
// its resource subscriptions there were never honored. Each stream now
// holds a Legacy backend session of its own, with its principal's
// exchanged token (upstream/ownsession.go).

// modernClients connects alice and bob on the Modern revision (for
// their lists) and opens a raw listen stream for each, granted tool and
// prompt list changes, returned once acknowledged: by then the stream
// holds its own sessions on the per-principal backends (opened before
// vmcp acknowledges).
func modernClients(t *testing.T, idp *devidp.IdP, url string) (map[string]*mcp.ClientSession, map[string]*sse) {
	t.Helper()
	cs, streams := map[string]*mcp.ClientSession{}, map[string]*sse{}
	for _, who := range []string{"alice", "bob"} {
		tok, err := idp.ClientToken(t.Context(), who, "")
		require.NoError(t, err)
		c, _, err := connect(t, url, tok, revisions["modern"], &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		require.NoError(t, err)
		cs[who] = c
		body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		streams[who] = openSSE(t, post(t, url, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28",
			"Mcp-Method": "subscriptions/listen", "Authorization": "Bearer " + tok}))
		streams[who].next(t, "notifications/subscriptions/acknowledged")
	}
	return cs, streams
}

// nextChange is the method of s's next list_changed (edgeWait at most).
func nextChange(t *testing.T, s *sse, who string) string {
	t.Helper()
	timeout := time.After(edgeWait)
	for {
		select {
		case m, ok := <-s.msgs:
			require.True(t, ok, "%s's stream ended", who)
			if method, _ := m["method"].(string); strings.HasSuffix(method, "/list_changed") {
				return method
			}
		case <-timeout:
			t.Fatalf("%s got no list_changed", who)
		}
	}
}

// TestModernListenHeardNoPerPrincipalLegacyListChanged: with Modern
// clients only, alice's tool redefined on a per-principal Legacy backend
// reaches alice's listen stream (and her next list) at once; bob's
// stream hears nothing of it (its next list_changed is a later shared
// prompt change) and bob keeps his own definition.
func TestModernListenHeardNoPerPrincipalLegacyListChanged(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub := startUserBackend(t, tokenChecker(t, idp, vaultAud))
	open := openBackend(t)
	v := userVMCP(t, idp, open, ub, config.ToolChangesWarn)
	cs, streams := modernClients(t, idp, v.URL)
	for who, c := range cs {
		require.Equal(t, who+" v1", lookupDesc(t, c), who)
	}
	ub.awaitGETs(t, "alice") // the stream's own backend session's GET stream is open

	ub.define("alice", "alice v2")
	require.Equal(t, "notifications/tools/list_changed", nextChange(t, streams["alice"], "alice"))
	assert.Equal(t, "alice v2", lookupDesc(t, cs["alice"]))
	addPrompt(open.Server, "barrier") // a shared change every client hears of
	for who, s := range streams {
		require.Equal(t, "notifications/prompts/list_changed", nextChange(t, s, who), "%s: the next list_changed is the shared one", who)
	}
	assert.Equal(t, "bob v1", lookupDesc(t, cs["bob"]))
}

// TestTwoSessionsOfAPrincipalGotEachListChangedTwice: a per-principal
// backend announces one change on each of alice's backend sessions (a
// Legacy client's and a Modern listen stream's); each announcement used
// to be passed on, so each of alice's clients was told twice. Now the
// principal's view changes once and each client is told once.
func TestTwoSessionsOfAPrincipalGotEachListChangedTwice(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub := startUserBackend(t, tokenChecker(t, idp, vaultAud))
	open := openBackend(t)
	v := userVMCP(t, idp, open, ub, config.ToolChangesWarn)
	tok, err := idp.ClientToken(t.Context(), "alice", "")
	require.NoError(t, err)
	got := map[string]chan string{}
	for _, name := range []string{"first", "second"} {
		ch := make(chan string, 16)
		c, _, err := connect(t, v.URL, tok, revisions["legacy"], notes(ch))
		require.NoError(t, err)
		require.Equal(t, "alice v1", lookupDesc(t, c), name)
		got[name] = ch
	}
	require.Eventually(t, func() bool { return sessionCount(ub.server("alice")) >= 2 },
		10*time.Second, 5*time.Millisecond, "alice's two backend sessions")
	ub.awaitGETs(t, "alice")

	ub.define("alice", "alice v2")
	for name, ch := range got {
		require.Equal(t, "tools", next(t, ch, name))
	}
	addPrompt(open.Server, "barrier")
	for name, ch := range got {
		require.Equal(t, "prompts", next(t, ch, name), "%s: told once of alice's change, then of the shared one", name)
	}
}

// sessionCount is the number of s's sessions.
func sessionCount(s *mcp.Server) int {
	n := 0
	for range s.Sessions() {
		n++
	}
	return n
}

// TestModernPerPrincipalLegacyResourceSubscriptionWasNotHonored: alice's
// and bob's Modern listen streams both ask for doc://note of a
// per-principal Legacy backend; each is granted it, subscribed on a
// backend session with its own principal's token, and hears only its own
// server's updates.
func TestModernPerPrincipalLegacyResourceSubscriptionWasNotHonored(t *testing.T) {
	modernDocSubscriptionsStayApart(t, false)
}

// docSubscriber connects who on revision rev and subscribes to
// doc://note; its resources/updated URIs arrive on the channel.
func docSubscriber(t *testing.T, idp *devidp.IdP, url, rev, who string) (*mcp.ClientSession, chan string) {
	t.Helper()
	tok, err := idp.ClientToken(t.Context(), who, "")
	require.NoError(t, err)
	ch := make(chan string, 16)
	c, _, err := connect(t, url, tok, revisions[rev], &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { ch <- r.Params.URI }})
	require.NoError(t, err)
	require.NoError(t, c.Subscribe(ctx10(t), &mcp.SubscribeParams{URI: "doc://note"}), who)
	return c, ch
}

// heardUpdate sends s's resources/updated of doc://note until ch gets
// one (the go-sdk client's listen opens in the background: an update may
// arrive before it knows the stream), bounded.
func heardUpdate(t *testing.T, s *mcp.Server, ch chan string, who string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		require.NoError(t, s.ResourceUpdated(ctx10(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://note"}))
		select {
		case uri := <-ch:
			require.Equal(t, "doc://note", uri)
			return
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s was not told of its own update", who)
		}
	}
}

// forget closes every session sub's server holds, as a restarted backend
// forgets them (their GET streams end; the next request is 404).
func forget(s *mcp.Server) {
	for ss := range s.Sessions() {
		_ = ss.Close()
	}
}

// TestModernListenLostItsPerPrincipalLegacySessionForGood: the backend
// forgetting the session a listen stream holds used to end what the
// stream heard from it. The session is now reopened: alice's next tool
// change reaches her stream; her resource is subscribed again and her
// stream told once of the gap, then of the next update.
func TestModernListenLostItsPerPrincipalLegacySessionForGood(t *testing.T) {
	t.Run("list changes", func(t *testing.T) {
		t.Parallel()
		idp := outboundIdP(t, func(string) bool { return false })
		ub := startUserBackend(t, tokenChecker(t, idp, vaultAud))
		open := openBackend(t)
		v := userVMCP(t, idp, open, ub, config.ToolChangesWarn)
		cs, streams := modernClients(t, idp, v.URL)
		ub.awaitGETs(t, "alice")
		forget(ub.server("alice"))
		ub.awaitGETs(t, "alice") // reopened

		ub.define("alice", "alice v2")
		require.Equal(t, "notifications/tools/list_changed", nextChange(t, streams["alice"], "alice"))
		assert.Equal(t, "alice v2", lookupDesc(t, cs["alice"]))
	})
	t.Run("resources", func(t *testing.T) {
		t.Parallel()
		idp := outboundIdP(t, func(string) bool { return false })
		url, srv, subs := startDocBackend(t, tokenChecker(t, idp, vaultAud), false)
		v := docVMCP(t, idp, openBackend(t), url)
		_, ch := docSubscriber(t, idp, v.URL, "modern", "alice")
		heardUpdate(t, srv("alice"), ch, "alice")
		require.Eventually(t, func() bool { return subs("alice") == 1 }, 10*time.Second, 5*time.Millisecond)

		forget(srv("alice"))
		require.Eventually(t, func() bool { return subs("alice") == 2 }, 10*time.Second, 5*time.Millisecond,
			"subscribed again on the reopened session")
		assert.Equal(t, "doc://note", updated(t, ch, "alice"), "told of the gap")
		for len(ch) > 0 { // updates heardUpdate sent twice
			<-ch
		}
		heardUpdate(t, srv("alice"), ch, "alice")
	})
}

// TestModernListenHeardNoPerPrincipalSSEListChanged: the same on a
// per-principal backend over the HTTP+SSE transport, whose list_changed
// arrive only on a session's SSE stream: alice's Modern listen stream
// hears her change (on a session of its own), bob's does not.
func TestModernListenHeardNoPerPrincipalSSEListChanged(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	ub := startUserBackendOn(t, tokenChecker(t, idp, vaultAud), true)
	open := openBackend(t)
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience,
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}, open.Config(), config.Backend{Name: "vault", URL: ub.URL, Transport: config.TransportSSE,
		Auth: &config.OutboundAuth{Type: config.OutboundTokenExchange, ClientID: "vmcp", ClientSecret: "vmcp-secret", Audience: vaultAud}})
	cs, streams := modernClients(t, idp, v.URL) // acknowledged: the streams' own SSE sessions are open
	for who, c := range cs {
		require.Equal(t, who+" v1", lookupDesc(t, c), who)
	}

	ub.define("alice", "alice v2")
	require.Equal(t, "notifications/tools/list_changed", nextChange(t, streams["alice"], "alice"))
	assert.Equal(t, "alice v2", lookupDesc(t, cs["alice"]))
	addPrompt(open.Server, "barrier")
	for who, s := range streams {
		require.Equal(t, "notifications/prompts/list_changed", nextChange(t, s, who), "%s: the next list_changed is the shared one", who)
	}
}
