package backends

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vmcp/vmcp/pkg/config"
)

// A backend URL with user info (http://user:pass@host/mcp) authenticates
// the control connection (http.Client.Do sends it as Basic auth); a direct
// call, which goes through the transport itself, must send it too (it got
// 401 Unauthorized).
func TestDirectCallToURLWithUserinfoIsNotUnauthorized(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"ok":true}}`))
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://user:pass@", 1) + "/mcp"
	b := newBackend(config.Backend{Name: "a", URL: u}, slog.New(slog.DiscardHandler), "test", nil, managerOptions{ids: &ids{}})
	res, err := b.Direct(context.Background(), "2026-07-28", DirectRequest{Method: "tools/call", Name: "x", Params: &mcp.CallToolParams{Name: "x"}})
	if err != nil || string(res) != `{"ok":true}` {
		t.Fatalf("got %s, %v; want {\"ok\":true}", res, err)
	}
}
