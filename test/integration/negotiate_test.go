package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// onlyVersionBackend serves a go-sdk stateful server that speaks only
// version: server/discover gets -32022 with data.supported [version], and
// an initialize asking for any other revision is refused (-32602), as a
// strict server may do.
func onlyVersionBackend(t *testing.T, name, version string) config.Backend {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	echoTool(srv, name, "echo")
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	refuse := func(w http.ResponseWriter, id json.RawMessage, code int, msg, data string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q,"data":%s}}`, id, code, msg, data)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		switch {
		case m.Method == "server/discover":
			refuse(w, m.ID, mcp.CodeUnsupportedProtocolVersion, "unsupported protocol version",
				fmt.Sprintf(`{"supported":[%q],"requested":"2026-07-28"}`, version))
		case m.Method == "initialize" && m.Params.ProtocolVersion != version:
			refuse(w, m.ID, -32602, "unsupported protocol version "+m.Params.ProtocolVersion, `{"supported":["`+version+`"]}`)
		default:
			inner.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hs.Close)
	return config.Backend{Name: name, URL: hs.URL, Transport: config.TransportStreamableHTTP}
}

// TestBackendUnsupportedVersionSupportedListIgnored pins issue 13's fixed
// fallback: a backend answering server/discover with -32022 and
// data.supported ["2025-06-18"] was then initialized at 2025-11-25 anyway
// (and a strict one refused it). The supported list picks the next try:
// the backend connects at 2025-06-18 and serves both client revisions.
func TestBackendUnsupportedVersionSupportedListIgnored(t *testing.T) {
	v := harness.StartVMCP(t, nil, onlyVersionBackend(t, "old", "2025-06-18"))
	awaitTools(t, v, "old_echo")
	for _, version := range []string{"", legacy} {
		cs := v.Connect(t, version, nil)
		require.Equal(t, "old/echo:hi", callText(t, cs, "old_echo", "hi"), "client %q", version)
	}
}
