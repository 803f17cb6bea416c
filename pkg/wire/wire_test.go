package wire

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Streamable HTTP: a POST's Accept must admit both media types; wildcards
// and parameters count as the go-sdk handler counts them.
func TestAcceptsBoth(t *testing.T) {
	assert.True(t, AcceptsBoth([]string{"application/json, text/event-stream"}))
	assert.True(t, AcceptsBoth([]string{"application/json", "text/event-stream;q=0.5"}))
	assert.True(t, AcceptsBoth([]string{"*/*"}))
	assert.True(t, AcceptsBoth([]string{"application/*, TEXT/*"}))
	assert.False(t, AcceptsBoth([]string{"application/json"}))
	assert.False(t, AcceptsBoth(nil))
}

func TestIsMediaType(t *testing.T) {
	assert.True(t, IsMediaType("application/json; charset=utf-8", "application/json"))
	assert.True(t, IsMediaType(" Text/Event-Stream", "text/event-stream"))
	assert.False(t, IsMediaType("application/jsonx", "application/json"))
	assert.False(t, IsMediaType("", "application/json"))
}

// A buffered body reads like the original and hands its bytes over whole.
func TestBufferedBodyReadsAndKeepsItsBytes(t *testing.T) {
	b := NewBufferedBody([]byte(`{"a":1}`))
	got, err := io.ReadAll(b)
	assert.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(got))
	assert.Equal(t, `{"a":1}`, string(b.Bytes()), "Bytes is whole after a read")
	assert.NoError(t, b.Close())
}

func TestPrefersEventStream(t *testing.T) {
	assert.False(t, PrefersEventStream([]string{"application/json, text/event-stream"}))
	assert.True(t, PrefersEventStream([]string{"text/event-stream, application/json"}))
	assert.True(t, PrefersEventStream([]string{"text/event-stream", "application/json"}))
	assert.False(t, PrefersEventStream([]string{"text/event-stream;q=0.5, application/json"}))
	assert.True(t, PrefersEventStream([]string{"application/json;q=0.8, text/event-stream"}))
	assert.False(t, PrefersEventStream([]string{"*/*"}))
	assert.False(t, PrefersEventStream([]string{"text/event-stream;q=0"}))
}
