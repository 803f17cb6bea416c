package status

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Recent reloads show on the page, in JSON and in the terminal, with a
// rejected config's file:line problems and the keys left as they were.
func TestReloadsAreShown(t *testing.T) {
	rep := sample
	at := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	rep.Reloads = []Reload{
		{Time: at, Source: "SIGHUP", Outcome: "invalid", Errors: []string{"vmcp.yaml:3: backends[0].name: invalid"}},
		{Time: at, Source: "file", Outcome: "partial", Added: []string{"fresh"}, Removed: []string{"gone"},
			Ignored: []string{"listen: cannot change while vmcp runs"}},
	}
	req := httptest.NewRequest(http.MethodGet, "/status", nil)
	rec := httptest.NewRecorder()
	Handler(func() Report { return rep }).ServeHTTP(rec, req)
	body := rec.Body.String()
	for _, want := range []string{`id="reloads"`, `data-outcome="invalid"`, `data-outcome="partial"`,
		"vmcp.yaml:3: backends[0].name: invalid", "not applied: listen: cannot change while vmcp runs", "fresh", "gone"} {
		assert.Contains(t, body, want)
	}

	req.Header.Set("Accept", "application/json")
	rec = httptest.NewRecorder()
	Handler(func() Report { return rep }).ServeHTTP(rec, req)
	assert.Contains(t, rec.Body.String(), `"outcome": "partial"`)

	var out bytes.Buffer
	require.NoError(t, Write(&out, rep))
	assert.Contains(t, out.String(), "reload 2026-12-01 11:00:00 UTC (file): partial; added fresh, removed gone, changed -")
	assert.Contains(t, out.String(), "  vmcp.yaml:3: backends[0].name: invalid")
}
