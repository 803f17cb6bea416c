package audit

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fields a client chooses (a Legacy session id header, a listen's
// JSON-RPC id, the method, a tool or prompt name, a resource URI, its
// clientInfo) are written at most MaxField bytes each, like arguments
// (MaxArguments). Regression: they were written whole, so one request
// with a 1 MB tool name (or a 200 KB Mcp-Session-Id, refused 404) wrote
// a 1 MB line: a client could fill the audit log's disk as fast as it
// could send, and the queue held up to 4,096 such bodies in memory.
func TestAuditOversizedClientFieldsWereWrittenWhole(t *testing.T) {
	var buf bytes.Buffer
	l, err := Open(Options{Path: "x", Open: func(string) (io.WriteCloser, error) { return nopCloser{&buf}, nil }})
	require.NoError(t, err)
	big := strings.Repeat("é", 500_000) // 1 MB of 2-byte runes
	l.Write(&Record{Session: big, Listen: big, Method: big, Tool: big, Prompt: big, Resource: big,
		Client: &Client{Name: big, Version: big}})
	require.NoError(t, l.Close())
	line := strings.TrimSpace(buf.String())
	assert.Less(t, len(line), 16*MaxField, "one line, bounded")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m), "valid JSON (cut on a rune boundary)")
	for _, k := range []string{"session", "listen", "method", "tool", "prompt", "resource"} {
		s, _ := m[k].(string)
		assert.True(t, strings.HasPrefix(big, s) && len(s) > 0 && len(s) <= MaxField, "%s: %d bytes", k, len(s))
	}
	c, _ := m["client"].(map[string]any)
	assert.LessOrEqual(t, len(c["name"].(string)), MaxField)
	assert.LessOrEqual(t, len(c["version"].(string)), MaxField)
}
