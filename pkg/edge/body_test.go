package edge

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
)

func TestBodyReachesNextInMemory(t *testing.T) {
	var got []byte
	var length int64
	h := ReadBody(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		bb, ok := r.Body.(*wire.BufferedBody)
		require.True(t, ok, "body is %T", r.Body)
		got, length = bb.Bytes(), r.ContentLength
	}), time.Second, 1024)
	r := httptest.NewRequest(http.MethodPost, "/mcp", io.MultiReader(strings.NewReader(`{"a":`), strings.NewReader(`1}`)))
	r.ContentLength = -1 // chunked
	h.ServeHTTP(httptest.NewRecorder(), r)
	assert.Equal(t, `{"a":1}`, string(got))
	assert.Equal(t, int64(7), length)
}

func TestBodyOverLimitIs413(t *testing.T) {
	ran := false
	h := ReadBody(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }), time.Second, 10)
	announced := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(strings.Repeat("x", 11)))
	chunked := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(strings.Repeat("x", 11)))
	chunked.ContentLength = -1
	for _, r := range []*http.Request{announced, chunked} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
		assert.Contains(t, w.Body.String(), "request body exceeds 10 bytes")
		assert.Equal(t, "close", w.Header().Get("Connection"))
	}
	assert.False(t, ran)
}

// A body announced but never sent is answered 408 within the timeout, and
// the connection is closed.
func TestStalledBodyIs408AndTheConnectionCloses(t *testing.T) {
	const timeout = 150 * time.Millisecond
	ran := make(chan struct{}, 1)
	hs := httptest.NewServer(ReadBody(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran <- struct{}{} }), timeout, 1024))
	defer hs.Close()
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	start := time.Now()
	_, err = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Contains(t, string(body), "not received within 150ms")
	assert.GreaterOrEqual(t, time.Since(start), timeout)
	_, err = conn.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the server closed the connection")
	assert.Empty(t, ran, "the handler never ran")
}

// TestBodyOfAnnouncedLengthWasCopiedWhileRead: a body read into a buffer
// of its Content-Length was grown (copied into one of twice the size) on
// its first read; it is read in place now, also without a length and
// over several reads.
func TestBodyOfAnnouncedLengthWasCopiedWhileRead(t *testing.T) {
	text := strings.Repeat("x", 4000)
	body := []byte(text)
	rd := strings.NewReader(text)
	read := func(size int64) []byte {
		rd.Reset(text)
		got, err := readAll(io.Reader(rd), size, 1<<20)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, body, read(int64(len(body))))
	require.Equal(t, body, read(-1))
	require.Equal(t, body, read(10))
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		read(int64(len(body)))
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > uint64(len(body))*3/2 {
		t.Fatalf("%d bytes allocated to read a %d-byte body of announced length; want one buffer of its size", per, len(body))
	}
	_, err := readAll(strings.NewReader(text), int64(len(body)), 100)
	require.ErrorIs(t, err, errTooLarge)
}
