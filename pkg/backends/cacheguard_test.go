package backends

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
)

func TestGuardMessageZeroesTTLAndKeepsIt(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"x://a","text":"\"ttlMs\":9"}],"ttlMs":60000,"cacheScope":"private","_meta":{"k":1}}}`
	out, changed := guardMessage([]byte(in))
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
		out, changed := guardMessage([]byte(same))
		assert.False(t, changed, same)
		assert.Equal(t, same, string(out))
	}
}

// The guard rewrites SSE events and JSON bodies of a real HTTP exchange,
// leaving every other event byte for byte.
func TestGuardHTTPRewritesSSEAndJSON(t *testing.T) {
	sse := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[],\"ttlMs\":500}}\n\n"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"ttlMs":7}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse)
	}))
	defer hs.Close()
	hc := guardHTTP(hs.Client())
	get := func(path string) string {
		resp, err := hc.Get(hs.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	out := get("/sse")
	first, second, _ := strings.Cut(out, "\n\n")
	assert.Equal(t, strings.SplitN(sse, "\n\n", 2)[0], first, "untouched event")
	assert.Contains(t, second, `"ttlMs":0`)
	assert.Contains(t, second, `"`+UpstreamTTLKey+`":500`)
	assert.True(t, strings.HasPrefix(second, "event: message\ndata: {"), second)
	assert.Contains(t, get("/json"), `"`+UpstreamTTLKey+`":7`)
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

// TestCacheGuardReadAnOverlongSSEEventWhole: the guard gathered an SSE
// event of any size in memory before passing it on; an event over
// wire.MaxEvent now fails the stream with an error naming the limit.
func TestCacheGuardReadAnOverlongSSEEventWhole(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message\n")
		line := "data: " + strings.Repeat("x", 64<<10) + "\n" // many data lines, each short
		for n := 0; n <= wire.MaxEvent; n += len(line) {
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
	}))
	defer hs.Close()
	resp, err := guardHTTP(hs.Client()).Get(hs.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.ErrorIs(t, err, wire.ErrEventTooLarge)
	require.ErrorContains(t, err, strconv.Itoa(wire.MaxEvent))
}
