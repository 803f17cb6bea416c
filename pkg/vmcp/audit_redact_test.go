package vmcp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// commonSecrets are arguments whose keys name secrets the way APIs spell
// them (snake, camel, kebab, header case), at the top, in nested objects
// and in arrays of arrays; the values all start with "leak-".
var commonSecrets = map[string]any{"text": "hi", "access_token": "leak-access", "api-key": "leak-dash-key",
	"nested": map[string]any{"apiKey": "leak-camel-key", "list": []any{
		map[string]any{"client_secret": "leak-client-secret"},
		map[string]any{"Authorization": "Bearer leak-authz"},
	}},
	"headers": map[string]any{"cookie": "leak-cookie", "X-Auth-Token": "leak-x-auth",
		"deep": []any{[]any{map[string]any{"refresh_token": "leak-refresh", "refreshToken": "leak-refresh-camel"}}}},
	"creds": map[string]any{"Private_Key": "leak-private-key", "aws.credentials": map[string]any{"id": "leak-cred-object"}},
}

// With arguments on and the default redact list, none of the common
// spellings of a secret's key writes its value to the audit file, on
// either revision. Regression: only the exact keys password, token and
// secret were redacted, so access_token, apiKey, client_secret,
// Authorization, cookie, refresh_token and api-key were logged in clear.
func TestAuditLoggedCommonSecretKeysInClear(t *testing.T) {
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	alpha := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCPWithOptions(t, vmcp.Options{AuditOpen: sink.open}, func(c *config.Config) {
		c.Audit = &config.Audit{Path: path, Arguments: true, Redact: config.DefaultRedact()}
	}, alpha.Config())
	for _, rev := range []string{"2025-11-25", ""} {
		cs := v.Connect(t, rev, nil)
		_, err := callTool(t, cs, "alpha_echo", commonSecrets)
		require.NoError(t, err)
	}
	recs := sink.await(t, "of both calls", 2, func(m map[string]any) bool { return m["tool"] == "alpha_echo" })
	for _, rec := range recs {
		args, _ := rec["arguments"].(map[string]any)
		require.NotNil(t, args, "arguments written")
		assert.Equal(t, "hi", args["text"], "other keys kept")
		assert.Equal(t, "[REDACTED]", args["access_token"])
	}
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(file), "leak-", "a secret's value in the audit file")
}
