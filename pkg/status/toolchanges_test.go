package status

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A changed tool definition shows in JSON, HTML and text, with how to
// accept it. The offered hash is shown in full: the HTML and text showed
// its first 12 digits only, which --offered and accept_tool_changes'
// offered refuse (they want all 64).
func TestToolChangesShownInEveryFormat(t *testing.T) {
	offered := strings.Repeat("b", 60) + "2222"
	rep := sample
	rep.Catalogue.ToolChanges = []ToolChange{{Backend: "alpha", Tool: "search", Outcome: "denied",
		Pinned: "aaaaaaaaaaaa1111", Offered: offered, Since: now.Add(-2 * time.Minute)}}
	h := Handler(func() Report { return rep })

	req := httptest.NewRequest(http.MethodGet, "/status", nil)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var got Report
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, rep.Catalogue.ToolChanges, got.Catalogue.ToolChanges)

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	html := rec.Body.String()
	assert.Contains(t, html, `<table id="tool-changes">`)
	assert.Contains(t, html, `<tr class="tool-change" data-outcome="denied"><td>alpha</td><td>search</td>`)
	assert.Contains(t, html, "<code>aaaaaaaaaaaa</code>")
	assert.Contains(t, html, "<code>"+offered+"</code>")
	assert.Contains(t, html, "vmcp accept-tool-change --offered OFFERED BACKEND TOOL")

	var text bytes.Buffer
	require.NoError(t, Write(&text, rep))
	assert.Contains(t, text.String(), `tool definition changed: backend alpha tool "search" withheld since 2026-12-01T09:58:00Z (2m 00s ago) (pinned aaaaaaaaaaaa, offered `+offered+`)`+
		"\n  accept it: vmcp accept-tool-change --offered "+offered+" alpha search\n")

	rec = httptest.NewRecorder()
	h2 := Handler(func() Report { return sample })
	h2.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	assert.NotContains(t, rec.Body.String(), "tool-changes", "no section without changes")
}
