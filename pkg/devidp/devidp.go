// Package devidp is a real OpenID Provider for local use and tests
// (github.com/zitadel/oidc/v3's op package: discovery, JWKS, token
// endpoint), listening on loopback only, with in-memory clients and a fresh
// RSA key per start. It issues RS256 JWT access tokens by the
// client_credentials grant (the client is the user: sub = client ID) and by
// RFC 8693 token exchange of its own access tokens. Not for production:
// secrets are fixed, nothing persists, no browser login.
package devidp

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2/clientcredentials"
)

// DefaultTokenLifetime is the lifetime of access tokens when
// Config.TokenLifetime is zero.
const DefaultTokenLifetime = time.Hour

// Client is one registered confidential client (secret by HTTP Basic or
// form post). Grants lists what it may use; empty means client_credentials.
type Client struct {
	ID     string
	Secret string
	Grants []oidc.GrantType
}

// Grant is what a token request asks for, after the client authenticated:
// Type is client_credentials or token exchange, Subject the sub the token
// will carry, Audience its aud.
type Grant struct {
	Type     oidc.GrantType
	ClientID string
	Subject  string
	Audience []string
	Scopes   []string
}

// Config configures a provider; the zero value plus Audience is usable.
type Config struct {
	// Addr is the loopback host:port to listen on (default 127.0.0.1:0).
	Addr string
	// Audience is the aud of client_credentials tokens that ask for none
	// (no `audience` or RFC 8707 `resource` parameter).
	Audience string
	// Clients are the registered clients (default DefaultClients()).
	Clients []Client
	// TokenLifetime is how long access tokens live (default one hour).
	TokenLifetime time.Duration
	// Policy, if set, may refuse a grant (it is called concurrently): an
	// *oidc.Error it returns is the answer as is, any other error answers
	// invalid_grant with its text.
	Policy func(Grant) error
}

// DefaultClients are alice and bob (client_credentials: each gets a token
// with its own sub) and vmcp (client_credentials and token exchange, for
// outbound identity); each secret is "<id>-secret".
func DefaultClients() []Client {
	return []Client{
		{ID: "alice", Secret: "alice-secret"},
		{ID: "bob", Secret: "bob-secret"},
		{ID: "vmcp", Secret: "vmcp-secret", Grants: []oidc.GrantType{oidc.GrantTypeClientCredentials, oidc.GrantTypeTokenExchange}},
	}
}

// IdP is a running provider; Close stops it.
type IdP struct {
	issuer  string
	clients map[string]Client
	hs      *http.Server
	done    chan struct{}
}

// Start listens on cfg.Addr (which must be a loopback address), serves
// the provider until Close and returns it. The issuer is
// http://<the bound address>.
func Start(cfg Config) (*IdP, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if err := checkLoopback(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.Clients == nil {
		cfg.Clients = DefaultClients()
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = DefaultTokenLifetime
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("devidp: %w", err)
	}
	p := &IdP{issuer: "http://" + ln.Addr().String(), clients: map[string]Client{}, done: make(chan struct{})}
	h, err := p.provider(cfg)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	p.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.hs.Serve(ln) // ends at Close
	}()
	return p, nil
}

// provider builds the op.Provider over a new in-memory storage.
func (p *IdP) provider(cfg Config) (http.Handler, error) {
	for _, c := range cfg.Clients {
		p.clients[c.ID] = c
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("devidp: %w", err)
	}
	s := &storage{key: key, kid: rand.Text()[:12], clients: p.clients, cfg: cfg}
	opCfg := &op.Config{AuthMethodPost: true}
	if _, err := rand.Read(opCfg.CryptoKey[:]); err != nil {
		return nil, fmt.Errorf("devidp: %w", err)
	}
	prov, err := op.NewProvider(opCfg, s, op.StaticIssuer(p.issuer), op.WithAllowInsecure(), op.WithHttpInterceptors(audienceParam))
	if err != nil {
		return nil, fmt.Errorf("devidp: %w", err)
	}
	return prov, nil
}

// checkLoopback refuses an address whose host is not a loopback IP or
// localhost: the provider's secrets are public.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("devidp: listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("devidp: listen address %q: want a loopback address (127.0.0.1, [::1] or localhost)", addr)
	}
	return nil
}

// Issuer is the provider's issuer URL (iss of its tokens; discovery at
// Issuer()+"/.well-known/openid-configuration").
func (p *IdP) Issuer() string { return p.issuer }

// TokenURL is the token endpoint.
func (p *IdP) TokenURL() string { return p.issuer + "/oauth/token" }

// Close stops the server and waits for it to end.
func (p *IdP) Close() error {
	err := p.hs.Close()
	<-p.done
	return err
}

// ClientToken gets an access token for the registered client id by the
// client_credentials grant over HTTP, asking for audience (none: the
// configured Audience) and scopes.
func (p *IdP) ClientToken(ctx context.Context, id, audience string, scopes ...string) (string, error) {
	c, ok := p.clients[id]
	if !ok {
		return "", errors.New("devidp: no client " + id)
	}
	cc := clientcredentials.Config{ClientID: c.ID, ClientSecret: c.Secret, TokenURL: p.TokenURL(), Scopes: scopes}
	if audience != "" {
		cc.EndpointParams = map[string][]string{"audience": {audience}}
	}
	tok, err := cc.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("devidp: token for %s: %w", id, err)
	}
	return tok.AccessToken, nil
}
