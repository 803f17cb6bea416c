package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecurityToolChangesDefaultsToWarn(t *testing.T) {
	c, err := Parse([]byte(okBackend), "ok.yaml")
	require.NoError(t, err)
	assert.Equal(t, ToolChangesWarn, c.Security.ToolChanges)
	assert.Empty(t, c.Security.AcceptToolChanges)

	t.Setenv("VMCP_TEST_ADMIN", "0123456789abcdef0123456789abcdef")
	c, err = Parse([]byte(okBackend+"security:\n  tool_changes: deny\n  admin_token: ${VMCP_TEST_ADMIN}\n  accept_tool_changes:\n    - {backend: a, tool: echo}\n"), "ok.yaml")
	require.NoError(t, err)
	assert.Equal(t, ToolChangesDeny, c.Security.ToolChanges)
	assert.Equal(t, []ToolRef{{Backend: "a", Tool: "echo"}}, c.Security.AcceptToolChanges)
	assert.Equal(t, "0123456789abcdef0123456789abcdef", c.Security.AdminToken)
}

func TestSecurityMistakesAreReportedWithTheirLines(t *testing.T) {
	src := okBackend + "security:\n  tool_changes: block\n  admin_token: short\n  accept_tool_changes:\n    - {backend: nope, tool: echo}\n    - {backend: a}\n"
	_, err := Parse([]byte(src), "bad.yaml")
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `bad.yaml:5: security.tool_changes: want "allow", "warn" or "deny", got "block"`)
	assert.Contains(t, msg, "bad.yaml:6: security.admin_token: must be at least 32 bytes")
	assert.Contains(t, msg, `bad.yaml:8: security.accept_tool_changes[0].backend: unknown backend "nope"`)
	assert.Contains(t, msg, "bad.yaml:9: security.accept_tool_changes[1].tool: required")
}
