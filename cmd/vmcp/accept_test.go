package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/vmcp"
)

// The command posts BACKEND and TOOL with the token from the environment
// (never a flag) and reports the server's refusal.
func TestAcceptToolChangePostsWithTheTokenFromTheEnvironment(t *testing.T) {
	var got vmcp.AcceptRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != vmcp.AdminAcceptPath || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"the admin token (security.admin_token) is required"}`))
			return
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		if got.Tool != "echo" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"no pending definition change"}`))
			return
		}
		_, _ = w.Write([]byte(`{"accepted":true,"offered":"abc123"}`))
	}))
	defer srv.Close()

	t.Setenv("VMCP_ADMIN_TOKEN", "tok")
	code, out, errOut := runArgs("accept-tool-change", "--url", srv.URL, "be", "echo")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, vmcp.AcceptRequest{Backend: "be", Tool: "echo"}, got)
	assert.Contains(t, out, `accepted: backend be tool "echo" definition abc123`)

	code, _, errOut = runArgs("accept-tool-change", "--url", srv.URL, "be", "other")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "404 Not Found: no pending definition change")

	t.Setenv("OTHER_TOKEN", "wrong")
	code, _, errOut = runArgs("accept-tool-change", "--url", srv.URL, "--token-env", "OTHER_TOKEN", "be", "echo")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "401 Unauthorized")

	t.Setenv("VMCP_ADMIN_TOKEN", "")
	code, _, errOut = runArgs("accept-tool-change", "--url", srv.URL, "be", "echo")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "set VMCP_ADMIN_TOKEN")
	code, _, _ = runArgs("accept-tool-change", "be")
	assert.Equal(t, 2, code)
}

// --offered with the 12 digits /status used to show (or any other
// non-hash) was posted and answered 409 "the backend now offers another
// definition", though it was the definition offered: it is refused before
// anything is posted, naming what it wants.
func TestAcceptToolChangeShortOfferedWasAConflict(t *testing.T) {
	posted := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posted = true }))
	defer srv.Close()
	t.Setenv("VMCP_ADMIN_TOKEN", "tok")
	for _, h := range []string{"0f7160082904", strings.ToUpper(strings.Repeat("ab", 32)), strings.Repeat("g", 64)} {
		code, _, errOut := runArgs("accept-tool-change", "--url", srv.URL, "--offered", h, "be", "echo")
		assert.Equal(t, 2, code, h)
		assert.Contains(t, errOut, "want all 64 lower-case hex digits", h)
	}
	assert.False(t, posted, "nothing is posted")
}
