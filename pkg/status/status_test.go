package status

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sample = Report{
	Name: "vmcp", Version: "1.2.3", Ready: true, Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
	Backends: []Backend{
		{Name: "alpha", Transport: "streamable-http", Revision: "2026-07-28", State: "ready", Tools: 3, Prompts: 1, Resources: 2},
		{Name: "beta", Transport: "stdio", State: "down", LastError: `connect: <script>alert("x")</script>`},
	},
	Sessions: Sessions{Legacy: 4, ModernListens: 2, ParkedCalls: 1},
	Catalogue: Catalogue{Tools: 3, Prompts: 1, Resources: 2, Templates: 1,
		Withheld:  []string{`tool "search" offered by backend "alpha" and backend "gamma"; withheld`},
		Conflicts: []Conflict{{Kind: "resources", Key: "file:///a", Winner: "alpha", Loser: "gamma"}}},
}

func TestWantsJSON(t *testing.T) {
	for accept, want := range map[string]bool{
		"application/json":                 true,
		"application/json; charset=utf-8":  true,
		"text/html,application/json;q=0.9": false,
		"application/json;q=0":             false,
		"":                                 false,
		"*/*":                              false,
		"text/html,application/xhtml+xml,*/*;q=0.8": false,
	} {
		assert.Equal(t, want, wantsJSON(accept), accept)
	}
}

func get(t *testing.T, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/status", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	Handler(func() Report { return sample }).ServeHTTP(rec, req)
	return rec
}

func TestHandlerServesHTML(t *testing.T) {
	rec := get(t, "text/html")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'")
	body := rec.Body.String()
	for _, want := range []string{
		`<tr class="backend" data-backend="alpha" data-state="ready">`,
		`<td class="state ready">ready</td>`,
		`<tr class="backend" data-backend="beta" data-state="down">`,
		`<td>2026-07-28</td>`,
		`<td data-count="legacy">4</td>`,
		`<td data-count="tools">3</td>`,
		`withheld</li>`,
		`<td>file:///a</td>`,
	} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "<script>", "backend errors are escaped")
	assert.Contains(t, body, "&lt;script&gt;")
}

func TestHandlerServesJSON(t *testing.T) {
	rec := get(t, "application/json")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	srv := httptest.NewServer(Handler(func() Report { return sample }))
	defer srv.Close()
	got, err := Fetch(context.Background(), srv.Client(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, sample, got)
}

func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, sample))
	out := buf.String()
	lines := strings.Split(out, "\n")
	assert.Equal(t, "vmcp (vmcp 1.2.3): ready (as of 2026-12-01 10:00:00 UTC)", lines[0])
	assert.Regexp(t, `^alpha\s+streamable-http\s+2026-07-28\s+ready\s+3\s+1\s+2\s+-$`, lines[3])
	assert.Regexp(t, `^beta\s+stdio\s+-\s+down\s+0\s+0\s+0\s+connect: <script>`, lines[4])
	assert.Contains(t, out, "sessions: 4 Legacy, 2 Modern listen streams, 1 parked MRTR calls")
	assert.Contains(t, out, "catalogue: 3 tools, 1 prompts, 2 resources, 1 resource templates")
	assert.Contains(t, out, `withheld: tool "search"`)
	assert.Contains(t, out, `conflict: resources "file:///a" kept from alpha, not advertised from gamma`)
}

func TestFetchFailuresNameTheURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Forbidden: Origin x is not allowed", http.StatusForbidden)
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte(" "), maxReportBytes+10))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for path, want := range map[string]string{
		"/forbidden": "403 Forbidden: Forbidden: Origin x is not allowed",
		"/html":      "not a vmcp status report",
		"/huge":      "answer larger than",
	} {
		_, err := Fetch(context.Background(), srv.Client(), srv.URL+path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), srv.URL+path)
		assert.Contains(t, err.Error(), want)
	}
}
