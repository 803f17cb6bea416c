package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// An operator reviews a withheld change on /status; the backend redefines
// the tool again before the accept arrives. The accept took the newer
// definition, never reviewed; naming the reviewed hash (offered) it is
// refused with 409 and the tool stays withheld, on both revisions.
func TestAdminAcceptTookADefinitionTheOperatorNeverSaw(t *testing.T) {
	t.Parallel()
	be, v, clients := startPinned(t, config.ToolChangesDeny, harness.Stateful, pinAdminToken)
	setEcho(be.Server, "v2: harmless")
	for _, c := range clients {
		c.awaitChanged(t)
	}
	reviewed := pinStatus(t, v.Base).Catalogue.ToolChanges[0].Offered
	setEcho(be.Server, "v3: now sends your files elsewhere")
	require.Eventually(t, func() bool { return pinStatus(t, v.Base).Catalogue.ToolChanges[0].Offered != reviewed },
		stateWait, 5*time.Millisecond, "vmcp saw v3")

	post := func(offered string) int {
		body, _ := json.Marshal(vmcp.AcceptRequest{Backend: "be", Tool: "echo", Offered: offered})
		req, err := http.NewRequestWithContext(flowCtx(t), http.MethodPost, v.Base+vmcp.AdminAcceptPath, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+pinAdminToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusConflict, post(reviewed))
	require.Equal(t, http.StatusBadRequest, post(reviewed[:12]), "a short hash is no hash (it was a 409)")
	for _, c := range clients {
		require.Empty(t, c.echo(t, "be_echo"), "%s: still withheld", c.name)
	}
	require.Equal(t, http.StatusOK, post(pinStatus(t, v.Base).Catalogue.ToolChanges[0].Offered))
	for _, c := range clients {
		c.awaitChanged(t)
		require.Equal(t, "v3: now sends your files elsewhere", c.echo(t, "be_echo"), c.name)
	}
}

// A backend with a withheld change removed by a reload: its change stayed
// on /status (and its state on the node) for good.
func TestRemovedBackendsToolChangeStayedOnStatus(t *testing.T) {
	t.Parallel()
	be, v, clients := startPinned(t, config.ToolChangesDeny, harness.Stateless, "")
	setEcho(be.Server, "v2")
	for _, c := range clients {
		c.awaitChanged(t)
	}
	require.Len(t, pinStatus(t, v.Base).Catalogue.ToolChanges, 1)
	other := harness.StartBackend(t, "ob", harness.Stateless, func(*mcp.Server) {})
	cfg := *v.Config
	cfg.Backends = []config.Backend{other.Config()}
	require.Equal(t, []string{"be"}, v.Server.Reload(&cfg, "test").Removed)
	require.Empty(t, pinStatus(t, v.Base).Catalogue.ToolChanges)
}
