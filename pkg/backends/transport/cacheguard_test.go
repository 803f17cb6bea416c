package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

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
	hc := GuardHTTP(hs.Client())
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
	assert.Contains(t, second, `"`+mcpmsg.UpstreamTTLKey+`":500`)
	assert.True(t, strings.HasPrefix(second, "event: message\ndata: {"), second)
	assert.Contains(t, get("/json"), `"`+mcpmsg.UpstreamTTLKey+`":7`)
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
	resp, err := GuardHTTP(hs.Client()).Get(hs.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.ErrorIs(t, err, wire.ErrEventTooLarge)
	require.ErrorContains(t, err, strconv.Itoa(wire.MaxEvent))
}
