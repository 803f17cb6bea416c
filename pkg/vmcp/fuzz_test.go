package vmcp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// FuzzEndpointDecoding sends arbitrary POSTs (protocol version, Mcp-Method
// and Mcp-Name headers, with or without a live Legacy session, any body)
// through the whole handler, edge and both dispatchers, over a real go-sdk
// backend: none may panic or get a 5xx. The seeds run with go test.
func FuzzEndpointDecoding(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	f.Add("", "", "", false, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	f.Add("2025-11-25", "", "", true, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	f.Add("2025-11-25", "", "", true, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x"}}}`))
	f.Add("2025-11-25", "", "", true, []byte(`{"jsonrpc":"2.0","id":4,"result":{}}`))
	f.Add("2025-11-25", "", "", false, []byte(`{"jsonrpc":"2.0","id":1}`))
	f.Add("2026-07-28", "tools/call", "alpha_echo", false, []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x"},`+meta+`}}`))
	f.Add("2026-07-28", "tools/list", "", false, []byte(`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"",`+meta+`}}`))
	f.Add("2026-07-28", "server/discover", "", false, []byte(`{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{`+meta+`}}`))
	f.Add("2026-07-28", "resources/read", "x", false, []byte(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"x",`+meta+`}}`))
	f.Add("not-a-version", "tools/list", "", false, []byte(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`))
	f.Add("", "", "", false, []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))
	f.Add("2026-07-28", "", "", false, []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`))
	f.Add("2025-11-25", "", "", true, []byte(`{`))

	b := harness.StartBackend(f, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(f, nil, b.Config())
	h := v.Server.Handler()
	sid := fuzzSession(f, h)
	f.Fuzz(func(t *testing.T, version, method, name string, session bool, body []byte) {
		if bytes.Contains(body, []byte("listen")) || !headerValue(version) || !headerValue(method) || !headerValue(name) {
			return // a listen stream lasts until its client leaves; bad header values never reach a handler
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, val := range map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if val != "" {
				req.Header.Set(k, val)
			}
		}
		if session {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%d for version %q method %q name %q session %v body %q:\n%s", w.Code, version, method, name, session, body, w.Body.String())
		}
	})
}

// fuzzSession opens one Legacy session through h and returns its id.
func fuzzSession(f *testing.F, h http.Handler) string {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	sid := w.Header().Get("Mcp-Session-Id")
	if sid == "" {
		f.Fatalf("initialize: %d %s", w.Code, w.Body.String())
	}
	return sid
}

// headerValue reports whether v could arrive as an HTTP header value.
func headerValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
