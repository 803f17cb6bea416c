package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Real servers over stdio: a backend session opened for a Legacy client
// speaks a Legacy revision (so the backend may ask it), a Modern client's
// requests stay Modern and are answered through inputResponses. The npm
// server-everything is in npm_everything_test.go.

var everythingBuild struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// everythingBinary builds the go-sdk conformance everything-server once per
// test binary.
func everythingBinary(t *testing.T) string {
	t.Helper()
	everythingBuild.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir, err := os.MkdirTemp("", "vmcp-everything-")
		if err != nil {
			everythingBuild.err = err
			return
		}
		bin := filepath.Join(dir, "everything-server")
		goCmd, err := exec.LookPath("go") // go test puts its own go first on PATH
		if err != nil {
			goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		}
		build := exec.Command(goCmd, "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		everythingBuild.out, everythingBuild.err = build.CombinedOutput()
		everythingBuild.bin = bin
	})
	require.NoError(t, everythingBuild.err, "building the everything-server: %s", everythingBuild.out)
	return everythingBuild.bin
}

// everythingStdio is the go-sdk everything-server as a stdio backend (it
// negotiates 2026-07-28 when asked, and any Legacy revision).
func everythingStdio(t *testing.T) config.Backend {
	return config.Backend{Name: "everything", Command: everythingBinary(t), Transport: config.TransportStdio}
}

// unprefixed keeps the backend's own tool names.
func unprefixed(c *config.Config) { c.Aggregation.ConflictResolution = config.StrategyPriority }

// askedClient connects a go-sdk client (version "" is Modern) that declares
// elicitation, sampling and roots (file:///work), accepts every
// elicitation with name, username and v "ada", and samples "Paris". Each
// request it answered is counted by method.
func askedClient(t *testing.T, v *harness.VMCP, version string) (*mcp.ClientSession, *asked) {
	t.Helper()
	a := &asked{n: map[string]int{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "asked", Version: "test"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.add("elicitation/create")
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada", "username": "ada", "v": "ada"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			a.add("sampling/createMessage")
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///work"})
	cs, err := client.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: v.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs, a
}

// asked counts the server-to-client requests a client answered.
type asked struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *asked) add(method string) { a.mu.Lock(); a.n[method]++; a.mu.Unlock() }
func (a *asked) count(method string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[method]
}

// controlRevision waits for backend name to be ready and returns the
// revision its control connection negotiated.
func controlRevision(t *testing.T, v *harness.VMCP, name string) string {
	t.Helper()
	require.Eventually(t, func() bool { return backendState(t, v, name) == "ready" }, stateWait, 10*time.Millisecond)
	for _, b := range v.Server.Status().Backends {
		if b.Name == name {
			return b.Revision
		}
	}
	return ""
}

// callOK calls tool and returns its text contents, joined by newlines,
// failing on an error or an error result.
func callOK(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "calling %s", tool)
	require.False(t, res.IsError, "%s: %s", tool, harness.Text(t, res))
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// Regression: vmcp opened a Legacy client's stdio backend session at
// 2026-07-28 (the control connection's revision), so the go-sdk
// everything-server refused to ask ("cannot be sent while serving a request
// on protocol version 2026-07-28: return an InputRequests map instead") and
// test_elicitation and test_sampling failed for every client.
func TestStdioLegacyClientElicitsAndSamplesOnModernServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the everything-server")
	}
	v := harness.StartVMCP(t, unprefixed, everythingStdio(t))
	require.Equal(t, modernRevision, controlRevision(t, v, "everything"), "the control connection is Modern")
	cs, a := askedClient(t, v, "2025-11-25")
	require.Equal(t, "Elicitation result: action=accept, content=map[name:ada username:ada v:ada]",
		callOK(t, cs, "test_elicitation", map[string]any{"message": "who?"}))
	require.Equal(t, "LLM response: Paris", callOK(t, cs, "test_sampling", map[string]any{"prompt": "capital?"}))
	require.Equal(t, "Hello, ada!", callOK(t, cs, "test_input_required_result_elicitation", nil))
	require.Equal(t, "Sampling response: Paris", callOK(t, cs, "test_input_required_result_sampling", nil))
	require.Equal(t, 2, a.count("elicitation/create"))
	require.Equal(t, 2, a.count("sampling/createMessage"))
}

// A Modern client's calls to the same stdio server stay Modern: its
// input_required results reach the client, which answers them in
// inputResponses (the go-sdk client's own multi round-trip loop).
func TestStdioModernClientAnswersInputRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the everything-server")
	}
	v := harness.StartVMCP(t, unprefixed, everythingStdio(t))
	cs, a := askedClient(t, v, "")
	require.Equal(t, modernRevision, cs.InitializeResult().ProtocolVersion)
	require.Equal(t, "Hello, ada!", callOK(t, cs, "test_input_required_result_elicitation", nil))
	require.Equal(t, "Sampling response: Paris", callOK(t, cs, "test_input_required_result_sampling", nil))
	require.Equal(t, "Client exposed 1 root(s): file:///work", callOK(t, cs, "test_input_required_result_list_roots", nil))
	require.Equal(t, 1, a.count("elicitation/create"))
	require.Equal(t, 1, a.count("sampling/createMessage"))
}

// dualEraBackend serves one go-sdk server at both eras on one endpoint
// (Modern POSTs to a stateless handler, the rest to a stateful one), as a
// real Modern server that keeps Legacy sessions does; setup adds tools.
func dualEraBackend(t *testing.T, setup func(*mcp.Server)) config.Backend {
	return dualEraBackendVia(t, setup, nil)
}

// dualEraBackendVia is dualEraBackend whose Legacy requests pass through
// legacyVia (nil: straight to the go-sdk handler) first.
func dualEraBackendVia(t *testing.T, setup func(*mcp.Server), legacyVia func(http.Handler) http.Handler) config.Backend {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "dual", Version: "test"}, nil)
	setup(srv)
	get := func(*http.Request) *mcp.Server { return srv }
	modern := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	var legacy http.Handler = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
	if legacyVia != nil {
		legacy = legacyVia(legacy)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") >= modernRevision {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return config.Backend{Name: "dual", URL: hs.URL, Transport: config.TransportStreamableHTTP}
}

// On HTTP alike: a Legacy client's session on a Modern backend that keeps
// Legacy sessions is Legacy, so a tool that asks over the session (quiz:
// two elicitations, sampling, roots) completes; over a stateless backend
// (no Legacy sessions) the Modern session stays and input_required is
// fulfilled from the client.
func TestHTTPLegacyClientSessionIsLegacyWhereBackendKeepsSessions(t *testing.T) {
	dual := dualEraBackend(t, func(s *mcp.Server) { addQuiz(s, nil) })
	stateless := harness.StartBackend(t, "stateless", harness.Stateless, addWizard)
	v := harness.StartVMCP(t, unprefixed, dual, stateless.Config())
	for _, name := range []string{"dual", "stateless"} {
		require.Equal(t, modernRevision, controlRevision(t, v, name), "%s: the control connection is Modern", name)
	}
	cs, a := askedClient(t, v, "2025-11-25")
	require.Equal(t, "ada likes ada; Paris; 1 root(s)", callOK(t, cs, "quiz", nil))
	require.Equal(t, "ada likes ada", callOK(t, cs, "wizard", nil))
	require.Equal(t, 4, a.count("elicitation/create"))
}

// Regression (review): one failed Legacy initialize (a 503, a refused
// connection) pinned every later Legacy client of the backend to the
// Modern revision until its control connection reconnected; only an
// answer (a refusal, or no Mcp-Session-Id) is remembered now.
func TestTransientLegacyInitializeFailurePinnedTheBackendToModern(t *testing.T) {
	var legacyInits, failed atomic.Int64
	dual := dualEraBackendVia(t, func(s *mcp.Server) { addQuiz(s, nil); harness.AddEcho(s, "echo") }, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"method":"initialize"`)) {
				legacyInits.Add(1)
				if failed.CompareAndSwap(0, 1) {
					http.Error(w, "try again", http.StatusServiceUnavailable)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	v := harness.StartVMCP(t, unprefixed, dual)
	require.Equal(t, modernRevision, controlRevision(t, v, "dual"))
	first, _ := askedClient(t, v, "2025-11-25") // its Legacy initialize gets the 503: its session falls back to Modern
	require.Equal(t, "echo:x", callOK(t, first, "echo", map[string]any{"text": "x"}))
	second, _ := askedClient(t, v, "2025-11-25")
	require.Equal(t, "ada likes ada; Paris; 1 root(s)", callOK(t, second, "quiz", nil), "the second client's session is Legacy again, so the backend can ask")
	require.EqualValues(t, 2, legacyInits.Load())
}
