package vmcp_test

import (
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
