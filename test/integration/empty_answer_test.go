package integration

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestEmptyAnswerOnTheSDKPathEndsTheRequestItAnswers: a Legacy client's
// answer with neither result nor error is refused (400 + -32600), and the
// request it answers still ends: here one of the go-sdk path (a Modern
// backend's input_required fulfilled through vmcp's own server session),
// so the call completes at once, not at the backend timeout.
func TestEmptyAnswerOnTheSDKPathEndsTheRequestItAnswers(t *testing.T) {
	b := harness.StartBackend(t, "m", harness.Stateless, func(s *mcp.Server) { addAskTool(s, "ask") })
	v := raVMCP(t, nil, []string{"m_ask"}, b)
	c := raConnect(t, v, `{"elicitation":{}}`)
	call := c.start(raCallBody("1", "m_ask", raMarker("A")))
	ask := call.next(t, "elicitation request")
	require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
	status, msgs := c.post(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Len(t, msgs, 1)
	require.Equal(t, -32600, msgs[0].errorCode(), "%s", msgs[0].raw)
	resp := call.response(t, "the call after the empty answer")
	require.NotContains(t, resp.text(), "asked:", "the empty answer was not taken as an answer: %s", resp.raw)
}
