package vmcp_test

import (
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// renewEnv is a vmcp over a vault that refuses revoked tokens, whose
// provider refuses alice's exchanges while refuseAlice is set.
type renewEnv struct {
	idp         *devidp.IdP
	v           *harness.VMCP
	vault       *gated
	check       func(string) string
	revoked     *sync.Map
	refuseAlice *atomic.Bool
}

// A backend that answers 401 to alice's exchanged token (revoked) gets
// the request once more with a fresh exchange; when the provider then
// refuses alice, her call fails with a JSON-RPC error naming the backend
// and the OAuth error code (no token), and her calls to other backends and
// bob's to vault still work. No token or secret reaches vmcp's logs,
// /status or /metrics, which count the refusals by backend and outcome.
func TestRevokedExchangedTokenIsReplacedAndARefusalFailsOnlyThatCall(t *testing.T) {
	e := renewEnv{revoked: &sync.Map{}, refuseAlice: &atomic.Bool{}}
	e.idp = outboundIdP(t, func(sub string) bool { return sub == "alice" && e.refuseAlice.Load() })
	e.check = tokenChecker(t, e.idp, vaultAud)
	open, svc := startGated(t, "open"), startGated(t, "svc")
	e.vault = startGated(t, "vault")
	vf := gatedFor(e.check, e.revoked, "alice", "bob")
	e.vault.verify.Store(&vf)
	logs := &lockedBuffer{}
	e.v = outboundVMCPWith(t, vmcp.Options{Logger: logr.FromSlogHandler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		e.idp, open, e.vault, svc)
	var tokens []string
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) { tokens = append(tokens, e.revokeThenRefuse(t, version)...) })
	}
	assert.Contains(t, logs.String(), "vault", "the logs were captured")
	for _, tok := range append(tokens, "vmcp-secret") {
		assert.NotContains(t, logs.String(), tok, "vmcp's logs hold no token or secret")
	}
	st, metrics := getBody(t, e.v.Base+"/status"), getBody(t, e.v.Base+"/metrics")
	assert.Regexp(t, `"type":\s*"token_exchange",\s*"issued":\s*[1-9][0-9]*,\s*"refused":\s*[1-9]`, st)
	assert.Regexp(t, `"type":\s*"client_credentials",\s*"issued":\s*1,`, st, "one vmcp token for svc")
	assert.True(t, regexp.MustCompile(`vmcp_outbound_tokens_total\{backend="vault",outcome="refused",type="token_exchange"\} [1-9]`).MatchString(metrics),
		"refusals counted by backend and outcome")
}

// revokeThenRefuse runs the test's steps at version and returns every
// token involved (the clients' and those the vault saw).
func (e renewEnv) revokeThenRefuse(t *testing.T, version string) []string {
	e.refuseAlice.Store(false)
	tokA, err := e.idp.ClientToken(t.Context(), "alice", "")
	require.NoError(t, err)
	tokB, err := e.idp.ClientToken(t.Context(), "bob", "")
	require.NoError(t, err)
	a, _, err := connect(t, e.v.URL, tokA, version, nil)
	require.NoError(t, err)
	_, err = call(t, a, "vault_secret")
	require.NoError(t, err)
	for _, h := range e.vault.values("Authorization")["tools/call"] {
		e.revoked.Store(strings.TrimPrefix(h, "Bearer "), true)
	}
	_, err = call(t, a, "vault_secret")
	require.NoError(t, err, "the revoked token was replaced after the 401")
	calls := e.vault.values("Authorization")["tools/call"]
	last := strings.TrimPrefix(calls[len(calls)-1], "Bearer ")
	require.Equal(t, "alice", e.check(last))

	e.revoked.Store(last, true)
	e.refuseAlice.Store(true)
	_, err = call(t, a, "vault_secret")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `backend "vault"`)
	assert.Contains(t, err.Error(), "invalid_grant")
	assert.NotContains(t, err.Error(), last)
	assert.NotContains(t, err.Error(), tokA)
	_, err = call(t, a, "open_secret")
	require.NoError(t, err, "alice's other backends are unaffected")
	b, _, err := connect(t, e.v.URL, tokB, version, nil)
	require.NoError(t, err)
	_, err = call(t, b, "vault_secret")
	require.NoError(t, err, "bob is unaffected")
	tokens := []string{tokA, tokB}
	for _, hs := range e.vault.values("Authorization") {
		for _, h := range hs {
			tokens = append(tokens, strings.TrimPrefix(h, "Bearer "))
		}
	}
	for _, page := range []string{"/status", "/metrics"} {
		body := getBody(t, e.v.Base+page)
		for _, secret := range []string{tokA, tokB, last, "vmcp-secret"} {
			assert.NotContains(t, body, secret, "%s shows no token or secret", page)
		}
	}
	return tokens
}

// getBody GETs url as JSON and returns the body.
func getBody(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx10(t), http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
