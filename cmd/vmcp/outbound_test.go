package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// forward_headers: [Authorization] was the only way to give a backend the
// user's identity, by passing the client's token through (MCP authorization
// forbids it). vmcp validate and vmcp serve now refuse it at its line,
// naming the rule and pointing at auth.type: token_exchange.
func TestValidateAndServeRefuseForwardingAuthorization(t *testing.T) {
	p := write(t, "v.yaml", `backends:
  - name: crm
    url: http://127.0.0.1:9/mcp
    forward_headers: [X-Tenant, Authorization]
`)
	for _, cmd := range []string{"validate", "serve"} {
		code, out, errOut := runArgs(cmd, "--config", p)
		assert.Equal(t, 1, code, cmd)
		assert.Empty(t, out, cmd)
		assert.Contains(t, errOut, p+":4: backends[0].forward_headers[1]: forwarding Authorization passes the client's credential through", cmd)
		assert.Contains(t, errOut, "MUST NOT pass through the token it received", cmd)
		assert.Contains(t, errOut, "auth.type: token_exchange", cmd)
	}
}
