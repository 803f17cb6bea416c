package integration

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayForwardedCaseVariantNameToBackend pins a Legacy tools/call whose
// params carry "Name" beside "name": vmcp routed and authorized the call by
// "name" and relayed "Name" untouched, so a backend that matches member
// names case-insensitively (Go's encoding/json, the last one winning) ran
// the tool "Name" named. The relayed params now hold only the exact
// members vmcp read.
func TestRelayForwardedCaseVariantNameToBackend(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	var mu sync.Mutex
	var calls [][]byte
	h := b.HTTP.Config.Handler
	b.HTTP.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			mu.Lock()
			calls = append(calls, body)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	status, msgs := c.post(t, raCallBody("3", "b_echo", `,"Name":"denied","NAME":"denied","_Meta":{"progressToken":"t"},"arguments":{"text":"hi"}`))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	assert.Zero(t, msgs[0].errorCode(), "the call itself is served: %s", msgs[0].raw)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, calls, 1, "one tools/call reached the backend")
	for _, variant := range []string{`"Name"`, `"NAME"`, `"_Meta"`} {
		assert.NotContains(t, string(calls[0]), variant, "a case variant of a member vmcp routes by reached the backend")
	}
	assert.Contains(t, string(calls[0]), `"name":"echo"`)
}
