package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolSearchIsOffAndSearchOnlyByDefault(t *testing.T) {
	c, err := Parse([]byte(okBackend), "ok.yaml")
	require.NoError(t, err)
	assert.False(t, c.ToolSearch.Enabled)
	assert.Equal(t, ToolListSearchOnly, c.ToolSearch.List)
}

func TestToolSearchKeysAreRead(t *testing.T) {
	c, err := Parse([]byte(okBackend+"tool_search:\n  enabled: true\n  list: all\n  embeddings:\n    url: http://127.0.0.1:8000/v1/embeddings\n    model: m\n"), "ok.yaml")
	require.NoError(t, err)
	assert.Equal(t, ToolSearch{Enabled: true, List: ToolListAll, Embeddings: Embeddings{URL: "http://127.0.0.1:8000/v1/embeddings", Model: "m"}}, c.ToolSearch)
}

func TestToolSearchProblemsNameTheirLine(t *testing.T) {
	for _, tt := range []struct {
		name, src, key string
		line           int
		msg            string
	}{
		{"list", "tool_search:\n  list: some\n", "tool_search.list", 5, `"some"`},
		{"url", "tool_search:\n  embeddings:\n    url: localhost:8000\n    model: m\n", "tool_search.embeddings.url", 6, "absolute http or https URL"},
		{"model", "tool_search:\n  embeddings:\n    url: http://localhost:8000/v1/embeddings\n", "tool_search.embeddings.model", 0, "required"},
		{"unknown key", "tool_search:\n  limit: 5\n", "tool_search.limit", 5, "unknown key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, okBackend+tt.src)
			require.Len(t, ps, 1, "problems: %v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			if tt.line > 0 {
				assert.Equal(t, tt.line, ps[0].Line)
			}
			assert.Contains(t, ps[0].Msg, tt.msg)
		})
	}
}
