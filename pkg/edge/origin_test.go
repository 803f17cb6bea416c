package edge

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const trusted = "https://app.example"

// served wraps h's next handler so a test sees whether it ran.
func originsUnder(allowed ...string) (http.Handler, *bool) {
	ran := new(bool)
	h := NewOrigins(allowed).Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		*ran = true
		w.Header().Set("Mcp-Session-Id", "s1")
		w.WriteHeader(http.StatusOK)
	}))
	return h, ran
}

func preflight(origin, method, headers string) *http.Request {
	r := httptest.NewRequest(http.MethodOptions, "http://vmcp.test/mcp", nil)
	r.Header.Set("Origin", origin)
	r.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		r.Header.Set("Access-Control-Request-Headers", headers)
	}
	return r
}

func TestPreflightFromAllowedOriginAllowsMCPMethodsAndHeaders(t *testing.T) {
	h, ran := originsUnder(trusted)
	headers := "authorization,content-type,last-event-id,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version,mcp-session-id"
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, preflight(trusted, m, headers))
		assert.Equal(t, http.StatusNoContent, w.Code, m)
		assert.Equal(t, trusted, w.Header().Get("Access-Control-Allow-Origin"), m)
		assert.Equal(t, m, w.Header().Get("Access-Control-Allow-Methods"))
		assert.Equal(t, headers, w.Header().Get("Access-Control-Allow-Headers"), m)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, preflight(trusted, http.MethodPost, "content-type,mcp-session-id"))
	assert.Equal(t, "content-type,mcp-session-id", w.Header().Get("Access-Control-Allow-Headers"), "without Mcp-Param-*")
	assert.False(t, *ran, "a preflight never reaches the endpoint")
}

func TestPreflightWithUnlistedHeaderOrMethodIsNotAllowed(t *testing.T) {
	h, _ := originsUnder(trusted)
	for name, r := range map[string]*http.Request{
		"unlisted header":        preflight(trusted, http.MethodPost, "content-type,mcp-param-region,x-evil"),
		"bare Mcp-Param- prefix": preflight(trusted, http.MethodPost, "mcp-param-"),
		"PUT":                    preflight(trusted, http.MethodPut, ""),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"), name)
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Headers"), name)
	}
}

func TestDisallowedOriginGets403AndRunsNothing(t *testing.T) {
	h, ran := originsUnder(trusted)
	for _, r := range []*http.Request{
		preflight("https://evil.example", http.MethodPost, "content-type"),
		withOrigin(httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", strings.NewReader("{}")), "https://evil.example"),
		withOrigin(httptest.NewRequest(http.MethodGet, "http://vmcp.test/mcp", nil), "null"),
		withOrigin(httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", nil), "https://app.example.evil"),
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusForbidden, w.Code, r.Header.Get("Origin"))
		assert.Contains(t, w.Body.String(), "is not allowed")
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))
	}
	assert.False(t, *ran)
}

func withOrigin(r *http.Request, origin string) *http.Request {
	r.Header.Set("Origin", origin)
	return r
}

func TestResponsesToAllowedOriginCarryCORSHeaders(t *testing.T) {
	h, ran := originsUnder(trusted, "HTTP://127.0.0.1:3000")
	for _, o := range []string{trusted, "http://127.0.0.1:3000"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, withOrigin(httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", strings.NewReader("{}")), o))
		require.True(t, *ran)
		assert.Equal(t, o, w.Header().Get("Access-Control-Allow-Origin"))
		assert.Equal(t, "Mcp-Session-Id, Www-Authenticate", w.Header().Get("Access-Control-Expose-Headers"))
	}
}

func TestRequestsWithoutOriginOrFromOwnHostPassWithoutCORS(t *testing.T) {
	h, ran := originsUnder() // nothing allowed
	for _, o := range []string{"", "http://vmcp.test"} {
		*ran = false
		w := httptest.NewRecorder()
		h.ServeHTTP(w, withOrigin(httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", strings.NewReader("{}")), o))
		assert.True(t, *ran, o)
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, withOrigin(httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", nil), trusted))
	assert.Equal(t, http.StatusForbidden, w.Code, "with no allowed_origins every other Origin is refused")
}

func TestCrossSiteFetchWithoutOriginIsRefused(t *testing.T) {
	h, ran := originsUnder(trusted)
	r := httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", strings.NewReader("{}"))
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Contains(t, w.Body.String(), "cross-site POST without Origin")
	assert.False(t, *ran)

	r = withOrigin(httptest.NewRequest(http.MethodPost, "http://vmcp.test/mcp", strings.NewReader("{}")), "HTTPS://APP.example")
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, "an allowed Origin in any case")
}

// TestPreflightInAnyOrderOrCaseIsAnswered pins issue 27: rs/cors only
// matched the sorted lower-case list browsers send, so a preflight built by
// a proxy or a non-browser client got 204 without CORS headers.
func TestPreflightInAnyOrderOrCaseIsAnswered(t *testing.T) {
	t.Parallel()
	h, _ := originsUnder(trusted)
	for headers, want := range map[string]string{
		"content-type, mcp-protocol-version, mcp-session-id, last-event-id, mcp-method, mcp-name": "content-type,last-event-id,mcp-method,mcp-name,mcp-protocol-version,mcp-session-id",
		"Content-Type, Mcp-Session-Id":                 "content-type,mcp-session-id",
		"MCP-SESSION-ID,Authorization":                 "authorization,mcp-session-id",
		"mcp-session-id, content-type, mcp-session-id": "content-type,mcp-session-id",
		"Mcp-Param-Region, Content-Type":               "content-type,mcp-param-region",
	} {
		for _, values := range [][]string{{headers}, strings.Split(headers, ",")} {
			r := preflight(trusted, http.MethodPost, "")
			r.Header["Access-Control-Request-Headers"] = values
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assert.Equal(t, http.StatusNoContent, w.Code, headers)
			assert.Equal(t, trusted, w.Header().Get("Access-Control-Allow-Origin"), values)
			assert.Equal(t, want, w.Header().Get("Access-Control-Allow-Headers"), values)
			assert.Equal(t, values, r.Header.Values("Access-Control-Request-Headers"), "the request is not modified")
		}
	}
	for _, headers := range []string{"Content-Type, X-Evil", "X-Evil, mcp-param-region", "Mcp-Param-", "content-type," + strings.Repeat(" ", maxRequestHeaders)} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, preflight(trusted, http.MethodPost, headers))
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"), headers)
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Headers"), headers)
	}
}

// TestPreflightEchoedMcpParamNamesThatAreNotTokens pins a preflight that
// named "mcp-param-a b", "mcp-param-a;b" or "mcp-param-fööbar": each was
// allowed and echoed into Access-Control-Allow-Headers, though no header
// can have such a name (RFC 9110 §5.1: a token). Now it is refused like an
// unlisted header.
func TestPreflightEchoedMcpParamNamesThatAreNotTokens(t *testing.T) {
	t.Parallel()
	h, _ := originsUnder(trusted)
	for _, headers := range []string{"mcp-param-a b", "mcp-param-a;b", "content-type,mcp-param-fööbar", "mcp-param-a\x7f", "mcp-param-a:b"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, preflight(trusted, http.MethodPost, headers))
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Origin"), headers)
		assert.Empty(t, w.Header().Get("Access-Control-Allow-Headers"), headers)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, preflight(trusted, http.MethodPost, "mcp-param-a_b.c~d!"))
	assert.Equal(t, "mcp-param-a_b.c~d!", w.Header().Get("Access-Control-Allow-Headers"), "every tchar is allowed")
}
