package edge

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzEdgeDecoding drives the whole edge (Host guard, body read, Origin
// and CORS) with arbitrary Host, Origin, preflight headers, method and
// body on a loopback connection: it must never panic or answer 5xx, and a
// refused request must never reach the handler. The seeds run with go test.
func FuzzEdgeDecoding(f *testing.F) {
	f.Add("127.0.0.1:8080", "", "", "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	f.Add("vmcp.example.com", "https://app.example", "content-type,mcp-param-x", "OPTIONS", "")
	f.Add("evil.example", "https://app.example", "", "GET", "")
	f.Add("localhost", "null", "mcp-param-", "OPTIONS", "")
	f.Add("[::1]", "https://app.example", ",,, MCP-PARAM-A ,x", "OPTIONS", "")
	f.Add("127.0.0.1", "http://127.0.0.1", "", "DELETE", strings.Repeat("x", 2048))
	f.Add("", "%zz://", "\x00", "POST", "\xff")
	g := NewHostGuard([]string{"vmcp.example.com", "other.example:8443"})
	o := NewOrigins([]string{"https://app.example"})
	local := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}
	f.Fuzz(func(t *testing.T, host, origin, reqHeaders, method, body string) {
		if !validMethod(method) {
			return
		}
		ran := false
		h := g.Handler(o.Handler(ReadBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }), time.Second, 1024))) // pkg/vmcp's order
		r := httptest.NewRequest(http.MethodGet, "http://vmcp.test/mcp", strings.NewReader(body))
		r.Method, r.Host = method, host
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Headers", reqHeaders)
		if method == http.MethodOptions {
			r.Header.Set("Access-Control-Request-Method", "POST")
		}
		r = r.WithContext(contextWithLocal(r.Context(), local))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("status %d for Host %q Origin %q", w.Code, host, origin)
		}
		if w.Code == http.StatusForbidden && ran {
			t.Fatalf("refused request reached the handler: Host %q Origin %q", host, origin)
		}
		if ok, _ := g.Check(r); !ok && ran {
			t.Fatalf("Host %q passed the guard", host)
		}
		if ran && len(body) > 1024 {
			t.Fatalf("a %d-byte body passed the 1024-byte bound", len(body))
		}
	})
}

func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range m {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	return true
}
