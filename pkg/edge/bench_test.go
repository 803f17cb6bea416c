package edge

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkEdgePOST is the edge's cost for one 200-byte MCP POST from an
// allowed browser Origin (Host guard, Origin and CORS, body read); "bare"
// is the same request to the handler alone.
func BenchmarkEdgePOST(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	b.Run("bare", func(b *testing.B) { benchPOST(b, noop) })
	b.Run("edge", func(b *testing.B) {
		benchPOST(b, NewHostGuard(nil).Handler(NewOrigins([]string{"https://app.example"}).Handler(ReadBody(noop, time.Second, 4<<20))))
	})
}

func benchPOST(b *testing.B, h http.Handler) {
	body := bytes.Repeat([]byte("x"), 200)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		r.Header.Set("Origin", "https://app.example")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}
