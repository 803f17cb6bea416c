package edge

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/vmcp/vmcp/pkg/wire"
)

// HostGuard is the DNS-rebinding guard (MCP security best practices: a
// local server must not answer a page that rebound its own name to
// 127.0.0.1). A request arriving on a loopback address is served only if
// its Host is a loopback name (localhost, 127.0.0.0/8, ::1) or listed in
// http.allowed_hosts; requests on other addresses are not restricted. It is
// the go-sdk StreamableHTTPHandler's rule plus the allowed list.
type HostGuard struct {
	names map[string]bool // lower-case host names, matched without port
	exact map[string]bool // lower-case host:port entries, matched whole
}

// NewHostGuard accepts, besides loopback names, each of allowed: a host
// name or IP matching any port, or host:port matching only that port.
// Entries are validated by pkg/config.
func NewHostGuard(allowed []string) *HostGuard {
	g := &HostGuard{names: map[string]bool{}, exact: map[string]bool{}}
	for _, h := range allowed {
		h = strings.ToLower(h)
		if _, _, err := net.SplitHostPort(h); err == nil {
			g.exact[h] = true
		} else {
			g.names[strings.Trim(h, "[]")] = true
		}
	}
	return g
}

// Check reports whether r may be served: false for a loopback connection
// whose Host is neither loopback nor allowed. listed is true when r passed
// only because its Host is in the allowed list.
func (g *HostGuard) Check(r *http.Request) (ok, listed bool) {
	la, isAddr := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !isAddr || la == nil || !wire.IsLoopback(la.String()) || wire.IsLoopback(r.Host) {
		return true, false
	}
	host := strings.ToLower(r.Host)
	if g.exact[host] {
		return true, true
	}
	name, _, err := net.SplitHostPort(host)
	if err != nil {
		name = host
	}
	if g.names[strings.Trim(name, "[]")] {
		return true, true
	}
	return false, false
}

// Handler refuses (403, naming the Host) what Check refuses and serves the
// rest with next. A request admitted only by the allowed list reaches next
// without http.LocalAddrContextKey, so that the go-sdk handler's and the
// dispatchers' own loopback checks, which this guard supersedes, pass it.
func (g *HostGuard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, listed := g.Check(r)
		if !ok {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Forbidden: invalid Host header %s (a loopback listener serves loopback names and http.allowed_hosts)", wire.Quote(r.Host)))
			return
		}
		if listed {
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, nil))
		}
		next.ServeHTTP(w, r)
	})
}
