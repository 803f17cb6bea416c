package integration

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// One backend going down leaves the others listed and callable and shows
// as "down" on /readyz; a call to its tool is a JSON-RPC error (never an
// empty success) whose message identifies the backend.
func TestOneBackendDownOthersStillServe(t *testing.T) {
	alpha := backendWith(t, "alpha", "search")
	beta := backendWith(t, "beta", "lookup")
	v := harness.StartVMCP(t, nil, alpha.Config(), beta.Config())
	cs := v.Connect(t, legacy, nil)
	require.ElementsMatch(t, []string{"alpha_search", "beta_lookup"}, harness.ToolNames(t, cs))
	require.Equal(t, "beta/lookup:1", callText(t, cs, "beta_lookup", "1")) // opens cs's beta session

	beta.Close()
	require.Eventually(t, func() bool { return backendState(t, v, "beta") == "down" }, stateWait, 20*time.Millisecond)
	code, body := readyz(t, v)
	require.Equal(t, http.StatusOK, code, "alpha is still up")
	require.True(t, body.Ready)
	require.Equal(t, "ready", backendState(t, v, "alpha"))

	sessions := map[string]*mcp.ClientSession{"existing session": cs, "new session": v.Connect(t, legacy, nil)}
	for label, s := range sessions {
		require.Equal(t, []string{"alpha_search"}, harness.ToolNames(t, s), label)
		require.Equal(t, "alpha/search:2", callText(t, s, "alpha_search", "2"), label)
		res, err := call(t, s, "beta_lookup", "3")
		require.Nil(t, res, label)
		we := rpcError(t, err)
		// The down backend's tools leave the catalogue, so the error is
		// "unknown tool", naming the tool and the backends that are down.
		require.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code, label)
		require.Contains(t, we.Message, `"beta_lookup"`, label)
		require.Contains(t, we.Message, "unavailable backends: beta", label)
	}
}

// With every backend down, a list request is a JSON-RPC error, never an
// empty success (which a client would cache as "this server has nothing").
func TestAllBackendsDownListIsAnErrorNotEmpty(t *testing.T) {
	alpha := backendWith(t, "alpha", "search")
	beta := backendWith(t, "beta", "lookup")
	v := harness.StartVMCP(t, nil, alpha.Config(), beta.Config())
	before := v.Connect(t, legacy, nil)
	require.Len(t, harness.ToolNames(t, before), 2)

	alpha.Close()
	beta.Close()
	require.Eventually(t, func() bool {
		code, body := readyz(t, v)
		return code == http.StatusServiceUnavailable && !body.Ready
	}, stateWait, 20*time.Millisecond)

	for label, cs := range map[string]*mcp.ClientSession{"new session": v.Connect(t, legacy, nil), "existing session": before} {
		res, err := cs.ListTools(ctx(t), nil)
		require.Nil(t, res, label)
		we := rpcError(t, err)
		require.Equal(t, int64(jsonrpc.CodeInternalError), we.Code, label)
		require.Contains(t, we.Message, "no backend is available", label)
	}
}
