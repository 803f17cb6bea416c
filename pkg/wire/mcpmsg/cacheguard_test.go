package mcpmsg

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuardMessageZeroesTTLAndKeepsIt(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"x://a","text":"\"ttlMs\":9"}],"ttlMs":60000,"cacheScope":"private","_meta":{"k":1}}}`
	out, changed := GuardMessage([]byte(in))
	require.True(t, changed)
	var msg struct {
		ID     int `json:"id"`
		Result struct {
			mcp.Cacheable
			Meta mcp.Meta `json:"_meta"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &msg))
	assert.Equal(t, 3, msg.ID)
	assert.Equal(t, 0, msg.Result.TTLMs)
	assert.Equal(t, "private", msg.Result.CacheScope)
	assert.Equal(t, float64(1), msg.Result.Meta["k"])
	assert.Equal(t, CacheHint{TTLMs: 60000, Private: true}, HintOf(msg.Result.Cacheable, msg.Result.Meta))

	for _, same := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"public"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ttlMs"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/x","params":{"ttlMs":5}}`,
		`not json "ttlMs"`,
	} {
		out, changed := GuardMessage([]byte(same))
		assert.False(t, changed, same)
		assert.Equal(t, same, string(out))
	}
}

func TestCacheHintMerge(t *testing.T) {
	var h CacheHint
	h = h.Merge(CacheHint{TTLMs: 0})
	assert.Equal(t, CacheHint{}, h)
	h = h.Merge(CacheHint{TTLMs: 5000})
	h = h.Merge(CacheHint{TTLMs: 0, Private: true})
	h = h.Merge(CacheHint{TTLMs: 9000})
	assert.Equal(t, CacheHint{TTLMs: 5000, Private: true}, h)
	assert.Equal(t, mcp.Cacheable{TTLMs: 5000, CacheScope: "private"}, h.Cacheable())
	assert.Equal(t, mcp.Cacheable{CacheScope: "public"}, CacheHint{}.Cacheable())
}
