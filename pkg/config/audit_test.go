package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuditSectionParsesWithDefaultRedactKeys(t *testing.T) {
	c, err := Parse([]byte(okBackend+"audit:\n  path: /tmp/audit.jsonl\n"), "ok.yaml")
	require.NoError(t, err)
	require.NotNil(t, c.Audit)
	assert.Equal(t, "/tmp/audit.jsonl", c.Audit.Path)
	assert.False(t, c.Audit.Arguments)
	assert.Equal(t, DefaultRedact, c.Audit.Redact)
	assert.Subset(t, c.Audit.Redact, []string{"password", "token", "secret"}, "the issue's list, and more")

	c, err = Parse([]byte(okBackend+"audit:\n  path: a.log\n  arguments: true\n  redact: [api_key]\n"), "ok.yaml")
	require.NoError(t, err)
	assert.True(t, c.Audit.Arguments)
	assert.Equal(t, []string{"api_key"}, c.Audit.Redact, "the file's list replaces the default")

	c, err = Parse([]byte(okBackend), "ok.yaml")
	require.NoError(t, err)
	assert.Nil(t, c.Audit, "no audit key: no audit log")
}

func TestAuditWithoutPathOrWithEmptyKeyIsRefused(t *testing.T) {
	_, err := Parse([]byte(okBackend+"audit:\n  arguments: true\n  redact: [\"\"]\n  colour: red\n"), "bad.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "audit.path")
	assert.Contains(t, err.Error(), "audit.redact[0]")
	assert.Contains(t, err.Error(), "colour")
}
