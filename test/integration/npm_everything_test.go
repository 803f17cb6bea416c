package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// The npm reference server @modelcontextprotocol/server-everything (a
// Legacy-only TypeScript server, 2025-11-25) over stdio, installed by
// scripts/ensure-server-everything.sh (a prerequisite of make unit; run
// here when it has not been). It registers trigger-elicitation-request,
// trigger-sampling-request and get-roots-list only for a connection whose
// client declared elicitation, sampling or roots.

var npmEverything struct {
	once sync.Once
	dir  string // "" when npm is unreachable
	msg  string // why it is not installed
	err  error
}

// npmEverythingStdio is the npm server-everything as a stdio backend; the
// test skips when npm or its registry is unreachable, and fails when the
// install fails otherwise.
func npmEverythingStdio(t *testing.T) config.Backend {
	t.Helper()
	if testing.Short() {
		t.Skip("installs and runs the npm server-everything")
	}
	npmEverything.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "ensure-server-everything.sh")
		var stderr strings.Builder
		cmd := exec.Command(script)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		npmEverything.dir, npmEverything.msg = strings.TrimSpace(string(out)), strings.TrimSpace(stderr.String())
		if err != nil {
			npmEverything.err = err
		}
	})
	require.NoError(t, npmEverything.err, "scripts/ensure-server-everything.sh: %s", npmEverything.msg)
	if npmEverything.dir == "" {
		t.Skipf("npm server-everything not installed: %s", npmEverything.msg)
	}
	d := npmEverything.dir
	node := filepath.Join(d, "node_modules", ".bin", "node")
	_, err := os.Stat(node)
	require.NoError(t, err, "the installed Node.js")
	return config.Backend{Name: "npm-everything", Transport: config.TransportStdio, Command: node,
		Args: []string{filepath.Join(d, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}}
}

// gatedTools are the npm server-everything tools registered only for
// clients that declare the capability.
var gatedTools = []string{"trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"}

// Regression: vmcp's own backend connections declared no client
// capabilities, so tools a server registers only for clients that declare
// elicitation, sampling or roots were never listed through vmcp.
func TestNpmEverythingCapabilityGatedToolsListed(t *testing.T) {
	v := harness.StartVMCP(t, unprefixed, npmEverythingStdio(t))
	require.Equal(t, "2025-11-25", controlRevision(t, v, "npm-everything"))
	for _, version := range []string{"2025-11-25", ""} {
		names := harness.ToolNames(t, v.Connect(t, version, nil))
		for _, tool := range gatedTools {
			require.Contains(t, names, tool, "listed to a client at %q", version)
		}
	}
}

// Elicitation, sampling and roots round-trip through the Legacy npm server
// over stdio, from a Legacy client (its own process, asked directly) and a
// Modern client (a parked call answered through inputResponses).
func TestNpmEverythingElicitsAndSamples(t *testing.T) {
	v := harness.StartVMCP(t, unprefixed, npmEverythingStdio(t))
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("client="+map[string]string{"": "modern"}[version]+version, func(t *testing.T) {
			cs, a := askedClient(t, v, version)
			text := callOK(t, cs, "trigger-elicitation-request", map[string]any{})
			require.Contains(t, text, "User provided the requested information")
			require.Contains(t, text, `"name": "ada"`)
			text = callOK(t, cs, "trigger-sampling-request", map[string]any{"prompt": "capital?"})
			require.Contains(t, text, "LLM sampling result")
			require.Contains(t, text, "Paris")
			require.Equal(t, 1, a.count("elicitation/create"))
			require.Equal(t, 1, a.count("sampling/createMessage"))
			require.Contains(t, callOK(t, cs, "get-roots-list", map[string]any{}), "file:///work")
		})
	}
}

// A client that did not declare elicitation gets the backend's own answer:
// a Legacy client's own process has no such tool; a Modern client's call
// runs on the control connection, which refuses the backend's
// elicitation/create with a JSON-RPC error the tool reports.
func TestNpmEverythingClientWithoutCapabilityGetsBackendsAnswer(t *testing.T) {
	v := harness.StartVMCP(t, unprefixed, npmEverythingStdio(t))
	plain := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	want := map[string]string{
		"2025-11-25": "Tool trigger-elicitation-request not found",
		"":           `vmcp: elicitation/create refused: backend "npm-everything"`,
	}
	for version, msg := range want {
		cs := v.Connect(t, version, plain)
		res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "trigger-elicitation-request", Arguments: map[string]any{}})
		if err == nil {
			require.True(t, res.IsError, "client at %q: %s", version, harness.Text(t, res))
			require.Contains(t, harness.Text(t, res), msg, "client at %q", version)
			continue
		}
		require.ErrorContains(t, err, msg, "client at %q", version)
	}
}
