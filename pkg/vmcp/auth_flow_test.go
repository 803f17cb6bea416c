package vmcp_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// An OAuth-capable client (the go-sdk's authorization code handler) needs
// nothing but vmcp's URL: from the first 401 it finds the protected
// resource metadata, the issuer and its endpoints, runs the code flow with
// PKCE and the RFC 8707 resource, and its token then works. This is what
// the MCP Inspector does from a browser.
func TestOAuthClientDiscoversEverythingFromTheFirst401(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := "http://" + ln.Addr().String() + "/mcp" // the audience is vmcp's own URL (RFC 9728 §3.3)
	idp := authtest.Start(t, endpoint)
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	cfg := &config.Config{Listen: ln.Addr().String(), Backends: []config.Backend{b.Config()}}
	cfg.ApplyDefaults()
	cfg.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: endpoint, ResourceName: "vmcp",
		Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	srv, err := vmcp.New(cfg, vmcp.Options{})
	require.NoError(t, err)
	awaitBackends(t, srv)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close(); _ = srv.Close() })

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorized := 0
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: idp.Mock.ClientID,
			ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: idp.Mock.ClientSecret}},
		RedirectURL: "http://127.0.0.1/callback",
		ScopeFilter: func([]string) []string { return []string{"openid"} }, // mockoidc requires it
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			authorized++
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			resp, err := noRedirect.Do(req) // mockoidc approves at once and redirects with the code
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: loc.Query().Get("code"), State: loc.Query().Get("state")}, nil
		},
	})
	require.NoError(t, err)
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			cs, _, err := connectWith(t, &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h}, "", version, nil)
			require.NoError(t, err)
			got, err := call(t, cs, "alpha_echo")
			require.NoError(t, err)
			require.Equal(t, "echo:hi", got)
		})
	}
	require.Equal(t, 1, authorized, "one authorization; the token was reused")
}
