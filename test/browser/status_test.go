package browser

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/status"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// chromiumPath finds headless Chromium: $VMCP_CHROMIUM, else chromium on
// PATH (scripts/ensure-chromium.sh installs Debian's package). The test is
// skipped, saying so, when neither exists, unless CI is set: there it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("VMCP_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("CI") != "" {
		t.Fatal("chromium not found and CI is set: run scripts/ensure-chromium.sh or set VMCP_CHROMIUM")
	}
	if err != nil {
		t.Skip("chromium not found: run scripts/ensure-chromium.sh or set VMCP_CHROMIUM")
	}
	return p
}

// dumpDOM loads url in headless Chromium and returns the rendered DOM.
func dumpDOM(t *testing.T, chromium, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	out, err := cmd.Output()
	require.NoError(t, err, "chromium --dump-dom %s", url)
	return string(out)
}

// statusVMCP starts vmcp with two backends: "up", a go-sdk server with two
// tools and a prompt, and "down", whose URL nothing listens on.
func statusVMCP(t *testing.T) *harness.VMCP {
	up := harness.StartBackend(t, "up", harness.Stateless, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		harness.AddEcho(s, "shout")
		s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/mcp"
	dead.Close() // its port now refuses connections
	down := config.Backend{Name: "down", URL: deadURL, Transport: config.TransportStreamableHTTP}
	return harness.StartVMCP(t, nil, up.Config(), down)
}

// modernRevision is what the go-sdk backend negotiates with vmcp.
const modernRevision = "2026-07-28"

var rowRE = regexp.MustCompile(`<tr class="backend" data-backend="([^"]+)" data-state="([^"]+)" data-restarts="(\d+)">\s*` +
	`<td class="name">[^<]*</td><td>([^<]*)</td><td>([^<]*)</td>\s*` +
	`<td class="state [^"]*">([^<]*)</td><td class="since">[^<]*<br><small>[^<]*</small></td>\s*` +
	`<td class="restarts">[^<]*(?:<br><small>[^<]*</small>)?</td>\s*` +
	`<td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>\s*<td class="error">([^<]*)`)

func TestStatusPageInChromiumShowsBothBackends(t *testing.T) {
	chromium := chromiumPath(t)
	v := statusVMCP(t)
	dom := dumpDOM(t, chromium, v.Base+"/status")

	rows := map[string][]string{}
	for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
		rows[m[1]] = m[2:]
	}
	require.Len(t, rows, 2, "backend rows in the rendered page:\n%s", dom)
	// state, restarts, transport, revision, state cell, tools, prompts, resources, error
	upRow, downRow := rows["up"], rows["down"]
	require.NotNil(t, upRow)
	require.NotNil(t, downRow)
	assert.Equal(t, []string{"ready", "0", "streamable-http", modernRevision, "ready", "2", "1", "0", ""}, upRow)
	assert.Equal(t, "down", downRow[0])
	assert.Equal(t, "down", downRow[4])
	assert.Equal(t, "", downRow[3], "no revision negotiated")
	assert.Contains(t, downRow[8], "connection refused", "the last error is shown")
	assert.Regexp(t, `<td data-count="tools">2</td>`, dom)
	assert.Regexp(t, `<p id="ready" data-ready="true">Ready`, dom)
}

func TestStatusJSONAndOriginRule(t *testing.T) {
	v := statusVMCP(t)
	cs := v.Connect(t, "2025-11-25", nil) // one live Legacy session

	rep, err := status.Fetch(context.Background(), nil, v.Base+"/status")
	require.NoError(t, err)
	require.Len(t, rep.Backends, 2)
	up := rep.Backends[0]
	assert.False(t, up.Since.IsZero(), "since when it is ready")
	up.Since = time.Time{}
	assert.Equal(t, status.Backend{Name: "up", Transport: "streamable-http", Revision: modernRevision,
		State: "ready", Tools: 2, Prompts: 1}, up)
	assert.Equal(t, "down", rep.Backends[1].State)
	assert.NotEmpty(t, rep.Backends[1].LastError)
	assert.False(t, rep.Backends[1].LastErrorAt.IsZero(), "the last error's time")
	assert.Equal(t, 1, rep.Sessions.Legacy)
	require.Len(t, rep.Sessions.List, 1)
	assert.Equal(t, cs.ID()[:8], rep.Sessions.List[0].ID)
	assert.Equal(t, 2, rep.Catalogue.Tools)
	require.NoError(t, cs.Close())

	for origin, want := range map[string]int{"https://evil.example": http.StatusForbidden, v.Base: http.StatusOK} {
		req, err := http.NewRequest(http.MethodGet, v.Base+"/status", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, "Origin %s", origin)
	}
}

func TestStatusShowsWithheldNamesAndConflicts(t *testing.T) {
	offer := func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		s.AddResource(&mcp.Resource{URI: "file:///shared", Name: "shared"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
	}
	a := harness.StartBackend(t, "a", harness.Stateless, offer)
	b := harness.StartBackend(t, "b", harness.Stateless, offer)
	v := harness.StartVMCP(t, func(c *config.Config) { c.Aggregation.ConflictResolution = config.StrategyManual },
		a.Config(), b.Config())

	rep, err := status.Fetch(context.Background(), nil, v.Base+"/status")
	require.NoError(t, err)
	require.Len(t, rep.Backends, 2)
	for _, row := range rep.Backends {
		assert.Equal(t, "ready", row.State, row.Name)
		assert.Zero(t, row.Tools, "%s: the colliding echo is withheld from both", row.Name)
	}
	assert.Equal(t, 1, rep.Backends[0].Resources, "a keeps the shared URI")
	assert.Equal(t, 0, rep.Backends[1].Resources)
	require.Len(t, rep.Catalogue.Withheld, 1)
	assert.Contains(t, rep.Catalogue.Withheld[0], `tool "echo" offered by backend "a"`)
	assert.Equal(t, []status.Conflict{{Kind: "resources", Key: "file:///shared", Winner: "a", Loser: "b"}}, rep.Catalogue.Conflicts)

	dom := dumpDOM(t, chromiumPath(t), v.Base+"/status")
	assert.Contains(t, dom, `<ul id="withheld"><li>unresolved conflict: tool "echo"`)
	assert.Contains(t, dom, `<td>file:///shared</td><td>a</td><td>b</td>`)
}

// TestStatusPageInChromiumShowsWhatHappenedSinceStart: the page's new
// sections render in a browser with real values: since when vmcp is
// ready apart from when the page was rendered, the process's start and
// uptime, the last minute's rates, the down backend's last error with its
// time, and the Legacy sessions table (an id prefix, the client, the
// revision, the backend sessions it opened).
func TestStatusPageInChromiumShowsWhatHappenedSinceStart(t *testing.T) {
	chromium := chromiumPath(t)
	v := statusVMCP(t)
	cs := v.Connect(t, "2025-11-25", nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up_echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	dom := dumpDOM(t, chromium, v.Base+"/status")

	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	assert.Regexp(t, `<p id="ready" data-ready="true">Ready since <time data-ready-since="">`+stamp+`</time> \(\d+s ago\)`, dom)
	assert.Regexp(t, `Page rendered at <time id="rendered">`+stamp+`</time>`, dom)
	assert.Regexp(t, `<p id="process">Started <time data-started="">`+stamp+`</time>, up <span data-uptime="\d+">\d+s</span>`, dom)
	assert.Regexp(t, `<p id="rates" data-requests="\d+\.\d\d" data-errors="\d+\.\d\d">Last minute: `, dom)
	assert.Regexp(t, `connection refused[^<]*<br><small class="error-at">`+stamp+` \(\d+s ago\)</small>`, dom)
	id := cs.ID()[:8]
	assert.Regexp(t, `<tr class="session" data-session="`+regexp.QuoteMeta(id)+`"><td><code>`+regexp.QuoteMeta(id)+`…</code></td>`+
		`<td>harness-client test</td><td>2025-11-25</td>\s*<td class="principal"></td><td>\d+s</td><td>\d+s</td><td class="backend-sessions">1</td>`, dom)
	assert.NotContains(t, dom, cs.ID(), "never the whole session id")
}
