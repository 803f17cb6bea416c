package wire

import (
	"mime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMediaTypeLikeParseMediaType(t *testing.T) {
	for _, ct := range []string{"application/json", "text/event-stream", "Application/JSON", "application/json; charset=utf-8",
		"text/event-stream;charset=utf-8", "", "nonsense;;", " application/json", "text/html"} {
		want, _, _ := mime.ParseMediaType(ct)
		assert.Equal(t, want, MediaType(ct), "content type %q", ct)
	}
}

// TestMediaTypeAllocatedPerCall pins the fast path: mime.ParseMediaType
// allocated its parameter map on every call and response.
func TestMediaTypeAllocatedPerCall(t *testing.T) {
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = MediaType("application/json") }))
}
