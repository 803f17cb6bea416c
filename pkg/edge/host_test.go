package edge

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
)

// hostStatus sends GET / with the given Host to a loopback server running
// the guard and returns the status and whether the handler saw a local
// address.
func hostStatus(t *testing.T, g *HostGuard, host string) (int, bool) {
	t.Helper()
	var sawLocal bool
	hs := httptest.NewServer(g.Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, sawLocal = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	})))
	defer hs.Close()
	req, err := http.NewRequest(http.MethodGet, hs.URL, nil)
	require.NoError(t, err)
	req.Host = host
	resp, err := hs.Client().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, sawLocal
}

func TestLoopbackListenerRefusesForeignHostUnlessAllowed(t *testing.T) {
	g := NewHostGuard([]string{"vmcp.example.com", "Other.Example:8443", "[2001:db8::1]"})
	for host, want := range map[string]int{
		"127.0.0.1:1":           http.StatusOK,
		"localhost":             http.StatusOK,
		"[::1]:80":              http.StatusOK,
		"evil.example":          http.StatusForbidden,
		"vmcp.example.com":      http.StatusOK,
		"VMCP.example.com:443":  http.StatusOK,
		"other.example:8443":    http.StatusOK,
		"other.example:8444":    http.StatusForbidden,
		"other.example":         http.StatusForbidden,
		"[2001:db8::1]:8080":    http.StatusOK,
		"vmcp.example.com.evil": http.StatusForbidden,
	} {
		got, sawLocal := hostStatus(t, g, host)
		assert.Equal(t, want, got, host)
		if got == http.StatusOK {
			assert.Equal(t, wire.IsLoopback(host), sawLocal, "%s: only an allowed-list host hides the local address", host)
		}
	}
}

func TestNonLoopbackConnectionsAreNotRestricted(t *testing.T) {
	g := NewHostGuard(nil)
	r := httptest.NewRequest(http.MethodGet, "http://evil.example/", nil)
	ctx := r.Context()
	for _, la := range []net.Addr{nil, &net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 80}} {
		if la != nil {
			r = r.WithContext(contextWithLocal(ctx, la))
		}
		ok, listed := g.Check(r)
		assert.True(t, ok)
		assert.False(t, listed)
	}
	r = r.WithContext(contextWithLocal(ctx, &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 80}))
	ok, _ := g.Check(r)
	assert.False(t, ok)
}
