package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: fast, Logger: discard})
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
	require.Eventually(t, func() bool { conns, reads := serving(); return conns == 0 && reads == 0 }, eventWait, 10*time.Millisecond,
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
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: fast, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	hs := streamServer(t, c)
	resp, _ := openStream(t, hs.URL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, resp.Close, "the client must not reuse the stream's connection")
}

// attachPipe registers an own stream for session on one end of a pipe
// (writes block until the returned end reads), bounded by timeout.
func attachPipe(t *testing.T, c *Cluster, session string, timeout time.Duration) net.Conn {
	srv, cli := net.Pipe()
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	o := &ownStream{timeout: timeout, lastIdx: -1, log: discard}
	o.setConn(srv)
	o.counted = true
	h := &holder{ctx: ctx, cancel: cancel, own: o, done: make(chan struct{})}
	c.mu.Lock()
	c.holders[session] = h
	c.mu.Unlock()
	c.ownStreams.Add(1)
	context.AfterFunc(ctx, func() { c.endOwn(session, h) })
	return cli
}

// The SDK sends a list_changed to every session in one loop; while the
// own stream wrote in that loop, one client that did not read held up
// every later session's message until its write timed out (and its
// stream ended).
func TestClusterOwnStreamStuckClientHeldUpOtherSessionsMessages(t *testing.T) {
	timing := fast
	timing.StreamPing = time.Hour // no ping touches the stuck stream
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: timing, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	startSession(t, c, "stuck")
	startSession(t, c, "live")
	stuck := attachPipe(t, c, "stuck", eventWait)
	live := bufio.NewReader(attachPipe(t, c, "live", eventWait))
	ctx, store := context.Background(), c.EventStore()
	sent := make(chan error, 1)
	go func() {
		if err := store.Append(ctx, "stuck", "", []byte(`{"m":"stuck"}`)); err != nil {
			sent <- err
			return
		}
		sent <- store.Append(ctx, "live", "", []byte(`{"m":"live"}`))
	}()
	line, err := live.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "event:") {
		line, err = live.ReadString('\n')
	}
	require.NoError(t, err)
	require.NoError(t, <-sent)
	select {
	case <-c.holder("stuck").done:
		t.Fatal("the stuck stream ended before the other session's message was written")
	default:
	}
	br := bufio.NewReader(stuck)
	require.Equal(t, `_0 {"m":"stuck"}`, readEvent(t, br), "the stuck client's message is still written once it reads")
}

// unreadStream is a cluster with session "S" and its own stream, whose
// client never reads (no pings).
func unreadStream(t *testing.T) (*Cluster, *holder) {
	timing := fast
	timing.StreamPing = time.Hour
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: timing, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	startSession(t, c, "S")
	attachPipe(t, c, "S", time.Minute)
	return c, c.holder("S")
}

// With writes queued, a client that never reads would let its stream's
// queue grow without bound: past maxQueued bytes the stream ends instead
// (the messages stay stored: the client resumes with Last-Event-ID).
func TestClusterOwnStreamQueueGrewWithoutBoundForAClientThatDoesNotRead(t *testing.T) {
	c, h := unreadStream(t)
	msg := []byte(`{"pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	for range maxQueued/len(msg) + 2 {
		require.NoError(t, c.EventStore().Append(context.Background(), "S", "", msg), "stored, so delivered by a resume")
	}
	<-h.done
	require.Nil(t, c.holder("S"), "the stream ended")
}

// replayGate is an event store whose replays of session "A" wait until
// released.
type replayGate struct {
	mcp.EventStore
	entered, release chan struct{}
}

func (g replayGate) After(ctx context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	if session == "A" {
		close(g.entered)
		<-g.release
	}
	return g.EventStore.After(ctx, session, stream, index)
}

// The lock ordering a stream's replay against its session's new messages
// was one of 64 stripes: while one session's replay was slow (Redis
// XRANGE), the messages of every session sharing its stripe waited, and a
// fan-out (the SDK sends one session after another) stalled whole (found
// by an adversarial trial with Redis DEBUG SLEEP). Each session has its
// own lock now.
func TestClusterOwnStreamSlowReplayHeldUpOtherSessionsMessages(t *testing.T) {
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: fast, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	gate := replayGate{c.events.EventStore, make(chan struct{}), make(chan struct{})}
	c.events.EventStore = gate
	hs := streamServerFor(t, c)
	startSession(t, c, "A")
	opened := make(chan error, 1) // the GET answers only after the replay
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"?s=A", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		opened <- err
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // until cancel or Close
			resp.Body.Close()
		}
	}()
	<-gate.entered
	done := make(chan error, 1)
	go func() {
		for i := range 256 { // with 64 stripes, some would share A's
			if err := c.EventStore().Append(context.Background(), fmt.Sprint("B", i), "", []byte(`{}`)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(gate.release)
		t.Fatal("other sessions' messages waited for session A's replay")
	}
	close(gate.release)
	locks := func() int { c.locks.mu.Lock(); defer c.locks.mu.Unlock(); return len(c.locks.m) }
	require.Eventually(t, func() bool { return locks() == 0 && c.holder("A") != nil }, eventWait, 5*time.Millisecond,
		"A's stream attached, and no session lock outlives its use")
	select { // a GET failing after the test had ended panicked it
	case err := <-opened:
		require.NoError(t, err, "A's GET")
	case <-time.After(10 * time.Second):
		t.Fatal("A's GET got no response head")
	}
}

// Last-Event-ID "_+1" was taken as 1, and one near the largest int made
// the stream's numbering overflow (found by an adversarial trial): only
// "_" and decimal digits below 2^31 are an index.
func TestClusterOwnStreamLastEventIDWithSignOrOverflowWasAccepted(t *testing.T) {
	for id, want := range map[string]int{"_0": 0, "_12": 12, "_2147483647": 2147483647} {
		r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
		r.Header.Set("Last-Event-ID", id)
		got, err := lastEventIndex(r)
		require.NoError(t, err, id)
		require.Equal(t, want, got, id)
	}
	for _, id := range []string{"_+1", "_-1", "_", "", "1", "_2147483648", "_9223372036854775807", "_1e3"} {
		r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
		r.Header.Set("Last-Event-ID", id)
		_, err := lastEventIndex(r)
		require.Error(t, err, "%q", id)
	}
}

// A stream ended while a write was in progress (its attach still writing
// the replay, or a message) was cut at once, so a client that was reading
// got a body cut short instead of the message and the last chunk (seen
// under load as "unexpected EOF" when a session ended right after its
// GET's head). close now waits for the write, and cuts only a stuck one.
func TestClusterOwnStreamEndedDuringAWriteWasCutShort(t *testing.T) {
	for range 20 {
		srv, cli := net.Pipe() // unbuffered: a write waits for the client's read
		o := &ownStream{timeout: 5 * time.Second, lastIdx: -1, log: discard}
		o.setConn(srv)
		wrote := make(chan error, 1)
		o.mu.Lock()
		go func() {
			defer o.mu.Unlock()
			wrote <- o.eventLocked([]byte(`{"m":1}`))
		}()
		entered, closed := make(chan struct{}), make(chan struct{})
		go func() { close(entered); o.close(); close(closed) }()
		<-entered
		runtime.Gosched()
		body, err := io.ReadAll(cli)
		require.NoError(t, err)
		require.NoError(t, <-wrote, "the write in progress")
		<-closed
		require.Contains(t, string(body), `data: {"m":1}`)
		require.True(t, strings.HasSuffix(string(body), "0\r\n\r\n"), "the stream ends with its last chunk: %q", body)
		cli.Close()
	}
}
