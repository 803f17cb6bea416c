package config

import (
	"strings"
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
	assert.Equal(t, DefaultRedact(), c.Audit.Redact)
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

// A redact entry of only _ - . and spaces normalises to nothing, so
// pkg/audit dropped it silently: vmcp validate said OK and the key it
// was meant to hide was written. It is refused with its line.
func TestAuditRedactEntryOfSeparatorsWasIgnored(t *testing.T) {
	ps := problemsOf(t, okBackend+"audit:\n  path: a.log\n  redact:\n    - token\n    - \"_-\"\n")
	require.Len(t, ps, 1, "%v", ps)
	assert.Equal(t, "audit.redact[1]", ps[0].Key)
	assert.Equal(t, 8, ps[0].Line)
	assert.Contains(t, ps[0].Msg, "names no key")
}

// audit.redact: [] replaced the default keys without a word, so every
// argument value went to the audit log unredacted: now a warning with its
// line (vmcp validate and start-up print File.Warnings).
func TestAuditEmptyRedactSilentlyDisabledRedaction(t *testing.T) {
	src := okBackend + "audit:\n  path: a.log\n  arguments: true\n  redact: []\n"
	f, err := ParseFile([]byte(src), "w.yaml")
	require.NoError(t, err)
	require.Len(t, f.Warnings, 1)
	w := f.Warnings[0]
	assert.Equal(t, "audit.redact", w.Key)
	assert.Equal(t, SeverityWarning, w.Severity)
	assert.Equal(t, strings.Count(okBackend, "\n")+4, w.Line)
	assert.Contains(t, w.Msg, "no argument value is redacted")
	assert.Empty(t, f.Config.Audit.Redact, "still the operator's choice")

	for _, ok := range []string{"audit:\n  path: a.log\n", "audit:\n  path: a.log\n  redact: [pin]\n"} {
		f, err := ParseFile([]byte(okBackend+ok), "w.yaml")
		require.NoError(t, err)
		assert.Empty(t, f.Warnings, ok)
	}
}
