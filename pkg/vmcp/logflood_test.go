package vmcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// flood is how many refused requests a flood test sends.
const flood = 200

// logged keeps every line vmcp logs at Info or above: its message and
// its "suppressed" count (-1 without one).
type logged struct {
	mu    sync.Mutex
	lines []loggedLine
}

type loggedLine struct {
	msg        string
	suppressed int64
}

func (l *logged) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelInfo }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	line := loggedLine{msg: r.Message, suppressed: -1}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "suppressed" {
			line.suppressed = a.Value.Int64()
		}
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}
func (l *logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logged) WithGroup(string) slog.Handler      { return l }

// since returns the lines logged after the first n.
func (l *logged) since(n int) []loggedLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedLine(nil), l.lines[n:]...)
}

func (l *logged) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// floodVMCP starts alpha behind a vmcp requiring idp's tokens, whose logs
// go to h and whose throttled lines run on clk.
func floodVMCP(t *testing.T, idp *authtest.IdP, h *logged, clk *pinClock, mutate func(*config.Config)) *harness.VMCP {
	alpha := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddCounter(s, "count") })
	return harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(h), LogNow: clk.Now}, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Nanosecond)}
		mutate(c)
	}, alpha.Config())
}

// checkFlood checks the lines logged during a flood of refusals (from
// line n on): one line of msg and at most two others, then, a second
// later, one more refusal's line carrying the flood's other refusals.
func checkFlood(t *testing.T, h *logged, n int, clk *pinClock, msg string, refuse func()) {
	t.Helper()
	var mine, other []loggedLine
	for _, l := range h.since(n) {
		if strings.HasPrefix(l.msg, msg) {
			mine = append(mine, l)
		} else {
			other = append(other, l)
		}
	}
	require.Equal(t, 1, len(mine), "%q lines for %d refusals", msg, flood)
	assert.LessOrEqual(t, len(other), 2, "no other line per request: %v", other)
	n = h.len()
	clk.Add(time.Second)
	refuse()
	last := h.since(n)
	require.NotEmpty(t, last)
	assert.Equal(t, int64(flood-1), last[len(last)-1].suppressed, "the next line reports the lines withheld")
}

// initialize sends one Legacy initialize with token and returns its status.
func initialize(t *testing.T, url, token string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	resp, _ := raw(t, http.MethodPost, url, token, "", body)
	return resp.StatusCode
}

// A client repeating an initialize vmcp refuses (sessions.max reached, or
// its principal's sessions.max_per_principal) writes one log line a
// second, the next one carrying how many were withheld; every refusal is
// still counted. Regression: one WARN line per refused initialize, so a
// client could fill the operator's log.
func TestRefusedInitializeFloodWroteOneLogLineEach(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		limit     func(*config.Config)
	}{
		{"sessions.max", "session limit reached", func(c *config.Config) { c.Sessions.Max, c.Sessions.MaxPerPrincipal = 1, 1 }},
		{"sessions.max_per_principal", "client session refused", func(c *config.Config) { c.Sessions.Max, c.Sessions.MaxPerPrincipal = 100, 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			idp := authtest.Start(t, audience)
			h, clk := &logged{}, &pinClock{now: time.Unix(1_700_000_000, 0)}
			v := floodVMCP(t, idp, h, clk, tc.limit)
			alice := idp.Token(t, "alice", "mcp:tools")
			_, _, err := connect(t, v.URL, alice, "2025-11-25", nil)
			require.NoError(t, err, "the first session")
			errors := func() float64 {
				return testutil.ToFloat64(v.Server.Metrics().Requests.WithLabelValues("initialize", "legacy", "error"))
			}
			n, before := h.len(), errors()
			for range flood {
				initialize(t, v.URL, alice)
			}
			assert.Equal(t, before+flood, errors(), "every refusal counted")
			checkFlood(t, h, n, clk, tc.msg, func() { initialize(t, v.URL, alice) })
		})
	}
}

// A client repeating requests on another principal's Legacy session gets
// 403 each time and writes one log line a second, the next one carrying
// how many were withheld; every refusal is still counted. Regression: one
// INFO line per refused request.
func TestForeignSessionRequestFloodWroteOneLogLineEach(t *testing.T) {
	t.Parallel()
	idp := authtest.Start(t, audience)
	h, clk := &logged{}, &pinClock{now: time.Unix(1_700_000_000, 0)}
	v := floodVMCP(t, idp, h, clk, func(*config.Config) {})
	alice, bob := idp.Token(t, "alice", "mcp:tools"), idp.Token(t, "bob", "mcp:tools")
	a, _, err := connect(t, v.URL, alice, "2025-11-25", nil)
	require.NoError(t, err)
	forbidden := func() float64 { return testutil.ToFloat64(v.Server.Metrics().SessionForbidden.WithLabelValues("POST")) }
	refuse := func() {
		resp, _ := raw(t, http.MethodPost, v.URL, bob, a.ID(), countCall)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
	}
	n, before := h.len(), forbidden()
	for range flood {
		refuse()
	}
	assert.Equal(t, before+flood, forbidden(), "every refusal counted")
	checkFlood(t, h, n, clk, "session request by another principal refused", refuse)
}
