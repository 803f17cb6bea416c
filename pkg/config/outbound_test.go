package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forward_headers: [Authorization] handed the client's token to the
// backend (token passthrough, which MCP authorization forbids); it and
// Cookie are refused at their line, pointing at auth.type: token_exchange.
func TestForwardHeadersAuthorizationIsRefusedAsTokenPassthrough(t *testing.T) {
	ps := problemsOf(t, okBackend+"    forward_headers: [X-Tenant, authorization, Cookie]\n")
	require.Len(t, ps, 2)
	assert.Equal(t, "backends[0].forward_headers[1]", ps[0].Key)
	assert.Equal(t, 4, ps[0].Line)
	assert.Contains(t, ps[0].Msg, "MUST NOT pass through the token")
	assert.Contains(t, ps[0].Msg, "auth.type: token_exchange")
	assert.Equal(t, "backends[0].forward_headers[2]", ps[1].Key)
}

const authTop = `auth:
  issuer: https://idp.example.com
  audience: https://vmcp.example.com/mcp
`

func TestOutboundAuthParsesAndExpandsTheSecret(t *testing.T) {
	t.Setenv("OUTBOUND_TEST_SECRET", "s3cret")
	c, err := Parse([]byte(authTop+okBackend+`    auth:
      type: token_exchange
      client_id: vmcp
      client_secret: ${OUTBOUND_TEST_SECRET}
      audience: https://crm.example.com/mcp
      scopes: [crm.read]
`), "test.yaml")
	require.NoError(t, err)
	a := c.Backends[0].Auth
	require.NotNil(t, a)
	assert.Equal(t, OutboundAuth{Type: OutboundTokenExchange, ClientID: "vmcp", ClientSecret: "s3cret",
		Audience: "https://crm.example.com/mcp", Scopes: []string{"crm.read"}}, *a)
}

func TestOutboundAuthRules(t *testing.T) {
	tests := []struct {
		name, src, key, msg string
	}{
		{"token exchange needs inbound auth", okBackend + "    auth: {type: token_exchange, client_id: v, audience: https://a.example.com, token_url: https://idp.example.com/token}\n",
			"backends[0].auth.type", "needs the top-level auth"},
		{"unknown type", authTop + okBackend + "    auth: {type: passthrough, client_id: v, audience: https://a.example.com}\n",
			"backends[0].auth.type", `unknown type "passthrough"`},
		{"client id", authTop + okBackend + "    auth: {type: client_credentials, audience: https://a.example.com}\n",
			"backends[0].auth.client_id", "required"},
		{"audience", authTop + okBackend + "    auth: {type: client_credentials, client_id: v}\n",
			"backends[0].auth.audience", "required"},
		{"token url without issuer", okBackend + "    auth: {type: client_credentials, client_id: v, audience: https://a.example.com}\n",
			"backends[0].auth.token_url", "required without the top-level auth"},
		{"stdio", authTop + "backends:\n  - name: a\n    command: cat\n    auth: {type: client_credentials, client_id: v, audience: https://a.example.com}\n",
			"backends[0].auth", "only to HTTP backends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, tt.src)
			require.NotEmpty(t, ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Contains(t, ps[0].Msg, tt.msg)
		})
	}
}
