package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readEvent reads one SSE event (skipping comments) as "id data".
func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var id, data string
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && data != "":
			return id + " " + data
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// The SDK stores every standalone message (with no stream attached too);
// the node writes it to the session's own stream at once, numbered as the
// SDK numbers its events, and a resume after the last one read gets what
// was stored meanwhile, once.
func TestClusterOwnStreamDeliversLiveAndOnResume(t *testing.T) {
	backendsCluster(t, func(t *testing.T, c *Cluster) {
		hs := streamServer(t, c)
		ctx, store := context.Background(), c.EventStore()
		require.NoError(t, store.Append(ctx, "S", "", []byte(`{"m":0}`))) // before any stream: replayed
		first, cancel := openStream(t, hs.URL)
		require.Equal(t, http.StatusOK, first.StatusCode)
		require.Equal(t, "text/event-stream", first.Header.Get("Content-Type"))
		require.Equal(t, "no", first.Header.Get("X-Accel-Buffering"))
		br := bufio.NewReader(first.Body)
		require.Equal(t, `_0 {"m":0}`, readEvent(t, br))
		require.NoError(t, store.Append(ctx, "S", "", []byte(`{"m":1}`)))
		require.Equal(t, `_1 {"m":1}`, readEvent(t, br), "written live")
		cancel()
		<-c.holder("S").done // the next message finds the stream gone or ends it
		require.NoError(t, store.Append(ctx, "S", "", []byte(`{"m":2}`)), "stored: delivered by the resume")
		second, _ := openStreamWith(t, http.DefaultClient, hs.URL, "_1")
		require.Equal(t, http.StatusOK, second.StatusCode)
		br = bufio.NewReader(second.Body)
		require.Equal(t, `_2 {"m":2}`, readEvent(t, br))
		require.NoError(t, store.Append(ctx, "S", "", []byte(`{"m":3}`)))
		require.Equal(t, `_3 {"m":3}`, readEvent(t, br))
	})
}

// The session's end ends its own stream cleanly (the last chunk: the
// client reads EOF, not an error), and a GET after it is 404.
func TestClusterOwnStreamEndsWithItsSession(t *testing.T) {
	backendsCluster(t, func(t *testing.T, c *Cluster) {
		hs := streamServer(t, c)
		resp, _ := openStream(t, hs.URL)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, c.EventStore().SessionClosed(context.Background(), "S"))
		_, err := io.ReadAll(resp.Body)
		require.NoError(t, err, "the stream ended with its last chunk")
		again, _ := openStream(t, hs.URL)
		require.Equal(t, http.StatusNotFound, again.StatusCode)
	})
}

// Before vmcp served standalone streams itself, each idle one kept a
// net/http connection goroutine (hanging in the SDK handler) and its
// background read goroutine, plus their buffers: two of an idle session's
// three goroutines.
func TestClusterIdleGETStreamHoldsNoServerGoroutine(t *testing.T) {
	const n = 20
	c, err := New(Options{Timing: fast, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	hs := streamServerFor(t, c)
	for i := range n {
		id := fmt.Sprint("S", i)
		startSession(t, c, id)
		resp, _ := openStream(t, hs.URL+"?s="+id)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	serving := func() (conns, reads int) {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		return strings.Count(stacks, "net/http.(*conn).serve("), strings.Count(stacks, "backgroundRead")
	}
	// A handler returns once its stream is attached; its goroutine ends just after.
	require.Eventually(t, func() bool { conns, reads := serving(); return conns == 0 && reads == 0 }, 5*time.Second, 10*time.Millisecond,
		"server connection goroutines and background reads with %d streams open", n)
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.holders, n)
}

// A first own stream ended with its last chunk on a keep-alive response:
// the client's transport pooled the connection the node then closed, and
// the next request it sent there (a DELETE of another session sharing the
// transport, 2 of 300 in a trial) failed. The response says
// Connection: close.
func TestClusterOwnStreamConnectionWasPooledAfterItsEnd(t *testing.T) {
	c, err := New(Options{Timing: fast, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	hs := streamServer(t, c)
	resp, _ := openStream(t, hs.URL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, resp.Close, "the client must not reuse the stream's connection")
}
