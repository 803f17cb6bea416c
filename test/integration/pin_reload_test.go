package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A reload keeping security.accept_tool_changes as it was (the README's
// SIGHUP for log rotation) accepts nothing more: the tool changes, a
// reload naming it accepts that change, the tool changes again, and
// another reload with the same list leaves the second change pending:
// withheld under deny, warned about under warn (on /status). Both
// revisions of client, on a Legacy and a Modern backend. Regression: every
// load accepted whatever was pending, so the rotation accepted the next
// rug pull.
func TestConfigReloadKeepingAcceptListAcceptedTheNextRugPull(t *testing.T) {
	for _, mode := range []string{config.ToolChangesDeny, config.ToolChangesWarn} {
		for _, era := range eras {
			t.Run(mode+"/"+era.String(), func(t *testing.T) {
				t.Parallel()
				onReloadKeepingAcceptList(t, mode, era)
			})
		}
	}
}

func onReloadKeepingAcceptList(t *testing.T, mode string, era harness.Mode) {
	be, v, clients := startPinned(t, mode, era, "")
	reload := func() {
		next := *v.Config
		next.Security.AcceptToolChanges = []config.ToolRef{{Backend: "be", Tool: "echo"}}
		rec := v.Server.Reload(&next, vmcp.ReloadAPI)
		require.Equal(t, vmcp.ReloadOK, rec.Outcome, "%+v", rec)
	}
	setEcho(be.Server, "v2")
	for _, c := range clients {
		c.awaitChanged(t)
	}
	reload()
	require.Empty(t, pinStatus(t, v.Base).Catalogue.ToolChanges, "v2 accepted by the reload naming it")
	for _, c := range clients {
		if mode == config.ToolChangesDeny {
			c.awaitChanged(t) // listed again
		}
		require.Equal(t, "v2", c.echo(t, "be_echo"), c.name)
	}

	setEcho(be.Server, "v3: the rug pull")
	for _, c := range clients {
		c.awaitChanged(t)
	}
	reload() // the same list: a SIGHUP to rotate the logs
	changes := pinStatus(t, v.Base).Catalogue.ToolChanges
	require.Len(t, changes, 1, "v3 is still a pending change")
	require.Equal(t, map[string]string{config.ToolChangesDeny: "denied", config.ToolChangesWarn: "warned"}[mode], changes[0].Outcome)
	require.Equal(t, 1.0, toolChanges(t, v.Server, "be", "accepted"), "one accept: v2's")
	for _, c := range clients {
		switch mode {
		case config.ToolChangesDeny:
			require.Empty(t, c.echo(t, "be_echo"), "%s: v3 withheld", c.name)
			require.Contains(t, c.call(t, "be_echo"), `unknown tool "be_echo"`, c.name)
		default:
			require.Equal(t, "v3: the rug pull", c.echo(t, "be_echo"), "%s: warn lists it", c.name)
		}
	}
}

// The admin accept without a hash answers the hash of the definition it
// accepted, the one /status showed: what an operator puts in
// accept_tool_changes' offered to accept that definition alone.
func TestAdminAcceptAnsweredWithoutTheDefinitionItAccepted(t *testing.T) {
	t.Parallel()
	be, v, clients := startPinned(t, config.ToolChangesDeny, harness.Stateless, pinAdminToken)
	setEcho(be.Server, "v2")
	for _, c := range clients {
		c.awaitChanged(t)
	}
	pending := pinStatus(t, v.Base).Catalogue.ToolChanges[0].Offered
	req, err := http.NewRequestWithContext(flowCtx(t), http.MethodPost, v.Base+vmcp.AdminAcceptPath,
		strings.NewReader(`{"backend":"be","tool":"echo"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+pinAdminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got vmcp.AcceptResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, vmcp.AcceptResponse{Accepted: true, Offered: pending}, got)
}
