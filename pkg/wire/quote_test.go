package wire

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 500 KB header was quoted in full in error messages: Quote keeps at
// most 256 bytes (cut on a UTF-8 boundary) and says how long it was.
func TestQuoteQuotedWholeHeaders(t *testing.T) {
	assert.Equal(t, `"short"`, Quote("short"))
	long := Quote(strings.Repeat("n", 500<<10))
	assert.Equal(t, `"`+strings.Repeat("n", MaxQuoted)+`"… (512000 bytes)`, long)
	cut := Clip(strings.Repeat("a", MaxQuoted-1) + "é")
	assert.Equal(t, strings.Repeat("a", MaxQuoted-1), cut, "not inside a rune")
}

// A text/event-stream response written by another handler gets the SSE
// caching headers; other responses are untouched.
func TestSSEWriterCompletesOthersSSEHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	w := SSEWriter(rec)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	assert.Equal(t, "no", rec.Header().Get("X-Accel-Buffering"))
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))

	rec = httptest.NewRecorder()
	w = SSEWriter(rec)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
	assert.Empty(t, rec.Header().Get("X-Accel-Buffering"))
}

// http.Error's plain-text answer becomes a JSON-RPC error body with the
// same status; a successful answer passes through.
func TestJSONErrorsRewritesPlainTextErrors(t *testing.T) {
	rec := httptest.NewRecorder()
	w, done := JSONErrors(rec)
	http.Error(w, "session not found", http.StatusNotFound)
	done()
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"session not found"}}`, rec.Body.String())

	rec = httptest.NewRecorder()
	w, done = JSONErrors(rec)
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok"))
	done()
	assert.Equal(t, "ok", rec.Body.String())
}
