package outbound_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/outbound"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

const (
	vmcpAud = "https://vmcp.example.com/mcp"
	crm     = "https://crm.example.com/mcp"
)

// fixture is a provider refusing bob's exchanges, and alice's and bob's
// principals with their access tokens for vmcp.
type fixture struct {
	idp        *devidp.IdP
	alice, bob identity.Principal
}

func newFixture(t *testing.T, lifetime time.Duration) fixture {
	t.Helper()
	idp, err := devidp.Start(devidp.Config{Audience: vmcpAud, TokenLifetime: lifetime, Policy: func(g devidp.Grant) error {
		if g.Type == oidc.GrantTypeTokenExchange && g.Subject == "bob" {
			return errors.New("bob may not reach the crm")
		}
		return nil
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idp.Close() })
	pr := func(who string) identity.Principal {
		tok, err := idp.ClientToken(t.Context(), who, "")
		require.NoError(t, err)
		return identity.Principal{Issuer: idp.Issuer(), Subject: who}.WithToken(tok)
	}
	return fixture{idp: idp, alice: pr("alice"), bob: pr("bob")}
}

func (f fixture) source(typ string, o func(*outbound.Options)) *outbound.Source {
	opts := outbound.Options{Backend: "crm", Issuer: f.idp.Issuer(),
		Auth:    config.OutboundAuth{Type: typ, ClientID: "vmcp", ClientSecret: "vmcp-secret", Audience: crm, Scopes: []string{"crm.read"}},
		Counter: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t"}, []string{"backend", "type", "outcome"})}
	if o != nil {
		o(&opts)
	}
	return outbound.New(opts)
}

// claims verifies tok as the crm backend would (its own audience).
func claims(t *testing.T, idp *devidp.IdP, tok string) map[string]any {
	t.Helper()
	p, err := gooidc.NewProvider(t.Context(), idp.Issuer())
	require.NoError(t, err)
	it, err := p.Verifier(&gooidc.Config{ClientID: crm}).Verify(t.Context(), tok)
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, it.Claims(&c))
	return c
}

func TestExchangedTokenHasTheBackendAudienceAndTheUserAndIsCachedPerPrincipal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.source(outbound.TokenExchange, nil) // token_url from the issuer's discovery document
	tok, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	c := claims(t, f.idp, tok)
	assert.Equal(t, "alice", c["sub"])
	assert.Equal(t, "crm.read", c["scope"])
	assert.NotEqual(t, f.alice.Token(), tok)

	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			again, err := s.Token(context.Background(), f.alice)
			assert.NoError(t, err)
			assert.Equal(t, tok, again)
		})
	}
	wg.Wait()
	assert.Equal(t, uint64(1), s.Stats().Issued, "one exchange for alice")
}

func TestConcurrentFirstRequestsShareOneExchange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.source(outbound.TokenExchange, nil)
	var wg sync.WaitGroup
	toks := make([]string, 16)
	for i := range toks {
		wg.Go(func() {
			var err error
			toks[i], err = s.Token(t.Context(), f.alice)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for _, tk := range toks {
		assert.Equal(t, toks[0], tk)
	}
	assert.Equal(t, uint64(1), s.Stats().Issued)
}

func TestRefusedExchangeNamesTheBackendAndTheCodeOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	var counter *prometheus.CounterVec
	s := f.source(outbound.TokenExchange, func(o *outbound.Options) { counter = o.Counter })
	_, err := s.Token(t.Context(), f.bob)
	var e *outbound.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "invalid_grant", e.Code)
	assert.Contains(t, err.Error(), `backend "crm"`)
	assert.NotContains(t, err.Error(), f.bob.Token())
	assert.NotContains(t, err.Error(), "vmcp-secret")
	assert.Equal(t, 1.0, testutil.ToFloat64(counter.WithLabelValues("crm", "token_exchange", "refused")))
	_, err = s.Token(t.Context(), f.alice)
	require.NoError(t, err, "alice is not affected")

	_, err = s.Token(t.Context(), identity.Principal{})
	require.ErrorIs(t, err, outbound.ErrNoSubject, "an anonymous request has nothing to exchange")
	st := s.Stats()
	assert.Equal(t, outbound.Stats{Type: "token_exchange", Issued: 1, Refused: 1, Cached: 1}, st)
}

func TestTokenIsRenewedBeforeItExpiresAndAfterA401(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10*time.Minute)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := f.source(outbound.TokenExchange, func(o *outbound.Options) { o.Now = clock; o.Auth.TokenURL = f.idp.TokenURL() })
	first, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	advance(10*time.Minute - time.Minute) // a minute before exp: still served from the cache
	again, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, uint64(1), s.Stats().Issued)
	advance(time.Minute - 29*time.Second) // within 30 s of exp
	second, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), s.Stats().Issued, "renewed shortly before exp")

	third, err := s.Renew(t.Context(), f.alice, second)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), s.Stats().Issued)
	assert.Equal(t, uint64(1), s.Stats().Rejected)
	again, err = s.Renew(t.Context(), f.alice, second) // a concurrent 401 to the same stale token
	require.NoError(t, err)
	assert.Equal(t, third, again, "the stale token was replaced once")
	assert.Equal(t, uint64(3), s.Stats().Issued)
}

func TestClientCredentialsIsVmcpsOwnTokenForEveryone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.source(outbound.ClientCredentials, nil)
	a, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	none, err := s.Token(t.Context(), identity.Principal{})
	require.NoError(t, err)
	assert.Equal(t, a, none)
	assert.Equal(t, "vmcp", claims(t, f.idp, a)["sub"])
	assert.Equal(t, uint64(1), s.Stats().Issued)

	bad := f.source(outbound.ClientCredentials, func(o *outbound.Options) { o.Auth.ClientSecret = "wrong" })
	_, err = bad.Token(t.Context(), identity.Principal{})
	var e *outbound.Error
	require.ErrorAs(t, err, &e)
	assert.NotEmpty(t, e.Code)
	assert.NotContains(t, fmt.Sprint(err), "wrong")
}

func TestCacheHoldsAtMostMaxEntries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.source(outbound.TokenExchange, func(o *outbound.Options) { o.MaxEntries = 1 })
	_, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	carol := identity.Principal{Issuer: f.idp.Issuer(), Subject: "carol"}.WithToken(f.alice.Token())
	_, err = s.Token(t.Context(), carol)
	require.NoError(t, err)
	assert.Equal(t, 1, s.Stats().Cached)
}
