// Package browser drives vmcp from headless Chromium: a page served from
// one origin talks to vmcp on another with fetch, as a browser MCP client
// would (CORS, Mcp-Session-Id, the GET stream), and the /status page is
// rendered.
package browser

import (
	"context"
	_ "embed"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

//go:embed testdata/page.html
var page []byte

// browserWait bounds one page run (Chromium's start included).
const browserWait = 90 * time.Second

// pageSite serves the page at / and receives its signals: /signal (the GET
// stream is open) and /result (the page's #out, when it is done).
type pageSite struct {
	*httptest.Server
	signal chan string
	result chan string
}

func startPageSite(t *testing.T) *pageSite {
	t.Helper()
	p := &pageSite{signal: make(chan string, 1), result: make(chan string, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	recv := func(ch chan string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			select {
			case ch <- string(b):
			default:
			}
			w.WriteHeader(http.StatusNoContent)
		}
	}
	mux.HandleFunc("POST /signal", recv(p.signal))
	mux.HandleFunc("POST /result", recv(p.result))
	mux.HandleFunc("GET /favicon.ico", http.NotFound)
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

// answerLog records vmcp's answers by request Origin and method.
type answerLog struct {
	mu  sync.Mutex
	got map[string][]int // "origin METHOD" -> statuses
}

func (l *answerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &answerWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rw, r)
		l.mu.Lock()
		defer l.mu.Unlock()
		k := r.Header.Get("Origin") + " " + r.Method
		l.got[k] = append(l.got[k], rw.status)
	})
}

func (l *answerLog) statuses(origin, method string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[origin+" "+method]
}

type answerWriter struct {
	http.ResponseWriter
	status int
}

func (w *answerWriter) WriteHeader(code int)        { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
func (w *answerWriter) Flush()                      { http.NewResponseController(w.ResponseWriter).Flush() }

// startVMCP serves vmcp (its own http.Server settings) over backend,
// allowing the given Origins, and records its statuses.
func startVMCP(t *testing.T, backend config.Backend, origins ...string) (*vmcp.Server, string, *answerLog) {
	t.Helper()
	cfg := &config.Config{Listen: "127.0.0.1:0", Backends: []config.Backend{backend}}
	cfg.ApplyDefaults()
	cfg.HTTP.AllowedOrigins = origins
	srv, err := vmcp.New(cfg, vmcp.Options{})
	require.NoError(t, err)
	ready, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.WaitSettled(ready), "backend still connecting") // New serves at once
	log := &answerLog{got: map[string][]int{}}
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = srv.HTTPServer()
	hs.Config.Handler = log.wrap(hs.Config.Handler)
	hs.Start()
	t.Cleanup(func() { _ = srv.Close(); hs.CloseClientConnections(); hs.Close() })
	return srv, hs.URL + cfg.Path, log
}

// runPage opens site's page on target in headless Chromium and returns
// the page's #out. onSignal runs when the page reports its GET stream open.
func runPage(t *testing.T, browser string, site *pageSite, target string, onSignal func()) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserWait)
	defer cancel()
	u := site.URL + "/?target=" + url.QueryEscape(target)
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-extensions",
		"--user-data-dir="+t.TempDir(), u)
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cancel() // kills this Chromium (CommandContext), by its own process
		<-exited
	}()
	for {
		select {
		case <-site.signal:
			if onSignal != nil {
				onSignal()
			}
		case dom := <-site.result:
			return dom
		case err := <-exited:
			exited <- err
			t.Fatalf("chromium exited before the page finished: %v\n%s", err, stderr.String())
		case <-ctx.Done():
			t.Fatalf("the page did not finish within %s\n%s", browserWait, stderr.String())
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.b) < 64<<10 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return string(l.b) }

var itemRE = regexp.MustCompile(`<li id="([a-z]+)">([^<]*)</li>`)

// items maps each step id in the page's #out to its text.
func items(dom string) map[string]string {
	m := map[string]string{}
	for _, g := range itemRE.FindAllStringSubmatch(dom, -1) {
		m[g[1]] = g[2]
	}
	return m
}

// A page from an allowed Origin uses vmcp with fetch alone: initialize,
// reading Mcp-Session-Id, tools/list, tools/call, a GET stream that gets
// tools/list_changed when a tool is added on the backend, a Modern call
// with Mcp-Method and Mcp-Name, and DELETE. The same page from another
// Origin fails at its first request: vmcp answers its preflight 403.
func TestBrowserPageUsesVMCPAcrossOrigins(t *testing.T) {
	browser := chromiumPath(t)
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	allowed, other := startPageSite(t), startPageSite(t)
	srv, target, statuses := startVMCP(t, b.Config(), allowed.URL)

	got := items(runPage(t, browser, allowed, target, func() {
		b.Server.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}))
	assert.Equal(t, map[string]string{
		"init":         "200 vmcp",
		"session":      "read",
		"tools":        "alpha_echo",
		"call":         "echo:from the browser",
		"stream":       "200",
		"notification": "notifications/tools/list_changed",
		"modern":       "echo:modern",
		"delete":       "204",
	}, got)
	assert.Contains(t, statuses.statuses(allowed.URL, http.MethodOptions), http.StatusNoContent, "the browser sent preflights")

	sessions := srv.SessionCount()
	got = items(runPage(t, browser, other, target, nil))
	assert.Equal(t, map[string]string{"error": "TypeError: Failed to fetch"}, got)
	assert.Equal(t, []int{http.StatusForbidden}, statuses.statuses(other.URL, http.MethodOptions), "vmcp refused the preflight")
	assert.Empty(t, statuses.statuses(other.URL, http.MethodPost), "no request ran")
	assert.Equal(t, sessions, srv.SessionCount())
}
