// Package harness runs vmcp end to end inside a Go test: in-process go-sdk
// MCP backends on loopback httptest servers (stateful Legacy or stateless
// Modern-capable), a stdio backend program, vmcp itself built with vmcp.New
// on its own httptest server, and go-sdk client sessions connected to it.
// Everything is stopped with t.Cleanup, in reverse order of creation
// (client sessions, then vmcp, then backends).
//
// Example:
//
//	func TestEcho(t *testing.T) {
//		alpha := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
//			harness.AddEcho(s, "echo")
//		})
//		v := harness.StartVMCP(t, nil, alpha.Config())
//		cs := v.Connect(t, "2025-11-25", nil) // a Legacy client session
//		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
//			Name:      "alpha_echo", // prefix strategy: {backend}_{name}
//			Arguments: map[string]any{"text": "hi"},
//		})
//		require.NoError(t, err)
//		require.Equal(t, "echo:hi", harness.Text(t, res))
//	}
//
// A backend can be taken down mid-test with (*Backend).Close; vmcp's view
// of it is visible on /readyz (VMCP.Base + "/readyz").
//
// StdioBackend builds the program in ./stdioserver once per test binary
// with the go command found on PATH (or in runtime.GOROOT), so it needs
// the module's source tree.
package harness
