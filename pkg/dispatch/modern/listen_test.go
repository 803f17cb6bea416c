package modern_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/dispatch/modern"
)

// sseMessages reads the JSON-RPC messages of an SSE body until EOF.
func sseMessages(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &m), data)
		out = append(out, m)
	}
	return out
}

func metaOf(m map[string]any, member string) map[string]any {
	inner, _ := m[member].(map[string]any)
	meta, _ := inner["_meta"].(map[string]any)
	return meta
}

// A listen asking for nothing vmcp can deliver (a URI no backend serves;
// the backends here cannot subscribe anyway) is acknowledged with an empty
// honored set and ends with its result at once; both carry the request id
// (string or number) as subscriptionId.
func TestListenAckThenResult(t *testing.T) {
	url := twoBackends(t, nil)
	for _, id := range []string{`"L1"`, `42`} {
		params := map[string]any{"notifications": map[string]any{
			"resourceSubscriptions": []string{"alpha://readme", "nobody://serves-this"},
		}}
		resp, b := post(t, url, modernHeaders("subscriptions/listen", ""), body(id, "subscriptions/listen", params))
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
		msgs := sseMessages(t, bytes.NewReader(b))
		require.Len(t, msgs, 2, "%s", b)

		var wantID any
		require.NoError(t, json.Unmarshal([]byte(id), &wantID))
		ack := msgs[0]
		assert.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
		assert.NotContains(t, ack, "id")
		assert.Equal(t, map[string]any{}, ack["params"].(map[string]any)["notifications"], "nothing honored")
		assert.Equal(t, wantID, metaOf(ack, "params")[mcp.MetaKeySubscriptionID])

		res := msgs[1]
		assert.Equal(t, wantID, res["id"])
		assert.Equal(t, "complete", res["result"].(map[string]any)["resultType"])
		assert.Equal(t, wantID, metaOf(res, "result")[mcp.MetaKeySubscriptionID])
	}
}

// listenDispatcher is a Dispatcher over an empty catalogue that advertises
// tools.listChanged, so a listen for it is honored and stays open.
func listenDispatcher(t *testing.T) (*modern.Dispatcher, string) {
	agg := aggregator.New(aggregator.Policy{}, nil)
	mgr := backends.NewManager(nil, agg, slog.New(slog.DiscardHandler), "test")
	opts := completeOptions(t, agg, mgr)
	opts.Capabilities = func() *mcp.ServerCapabilities {
		return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	}
	d := modern.New(agg, mgr, opts)
	hs := httptest.NewServer(d)
	t.Cleanup(hs.Close)
	return d, hs.URL
}

// openListen starts a listen for tools list changes and returns the
// response once the acknowledgement has arrived.
func openListen(t *testing.T, ctx context.Context, url string) (*http.Response, *bufio.Reader, map[string]any) {
	params := map[string]any{"notifications": map[string]any{"toolsListChanged": true, "resourcesListChanged": true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body(`"s"`, "subscriptions/listen", params)))
	require.NoError(t, err)
	req.Header = modernHeaders("subscriptions/listen", "")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			var ack map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &ack))
			return resp, rd, ack
		}
	}
}

// An honored listen stays open (the ack is flushed at once) until vmcp
// shuts down, which ends it with the listen result.
func TestListenHonoredEndsAtClose(t *testing.T) {
	d, url := listenDispatcher(t)
	resp, rd, ack := openListen(t, context.Background(), url)
	defer resp.Body.Close()
	assert.Equal(t, map[string]any{"toolsListChanged": true}, ack["params"].(map[string]any)["notifications"])
	require.Equal(t, 1, d.Subscriptions().Len())

	d.Close()
	msgs := sseMessages(t, rd)
	require.Len(t, msgs, 1)
	assert.Equal(t, "s", msgs[0]["id"])
	assert.Equal(t, "s", metaOf(msgs[0], "result")[mcp.MetaKeySubscriptionID])
	require.Eventually(t, func() bool { return d.Subscriptions().Len() == 0 }, 5*time.Second, 5*time.Millisecond)
}

// A client closing its listen stream cancels it: the stream is released.
func TestListenClientCloseReleases(t *testing.T) {
	d, url := listenDispatcher(t)
	ctx, cancel := context.WithCancel(context.Background())
	resp, _, _ := openListen(t, ctx, url)
	require.Equal(t, 1, d.Subscriptions().Len())
	cancel()
	_ = resp.Body.Close()
	require.Eventually(t, func() bool { return d.Subscriptions().Len() == 0 }, 5*time.Second, 5*time.Millisecond)
}
