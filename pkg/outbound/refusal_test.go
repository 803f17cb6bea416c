package outbound_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/outbound"
)

// countingTransport counts the requests that reach the token endpoint.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}

// Every request of a principal whose exchange the token endpoint refused
// asked the endpoint again. Now the refusal is kept for 10 s (injected
// clock): bob's 16 concurrent and 8 sequential requests make one exchange
// attempt, all fail naming the backend and the OAuth code, counted as
// refused once and refused_cached for the rest; alice is not affected; a
// new access token of bob's, or the end of the window, asks again.
func TestRefusedPrincipalReaskedTheTokenEndpointOnEveryRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	hits := &countingTransport{}
	var counter *prometheus.CounterVec
	s := f.source(outbound.TokenExchange, func(o *outbound.Options) {
		o.Now, o.Auth.TokenURL, o.HTTPClient = clock, f.idp.TokenURL(), &http.Client{Transport: hits}
		counter = o.Counter
	})
	refused := func() {
		_, err := s.Token(t.Context(), f.bob)
		var e *outbound.Error
		if assert.ErrorAs(t, err, &e) {
			assert.Equal(t, "invalid_grant", e.Code)
			assert.Contains(t, err.Error(), `backend "crm"`)
			assert.NotContains(t, err.Error(), f.bob.Token())
		}
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(refused)
	}
	wg.Wait()
	for range 8 {
		refused()
	}
	require.Equal(t, int64(1), hits.n.Load(), "one exchange attempt for bob within the window")
	assert.Equal(t, 1.0, testutil.ToFloat64(counter.WithLabelValues("crm", "token_exchange", "refused")))
	cached := testutil.ToFloat64(counter.WithLabelValues("crm", "token_exchange", "refused_cached"))
	assert.True(t, cached >= 8 && cached <= 23, "the requests that did not share the attempt were refused from memory: %v", cached)

	_, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err, "alice is not affected by bob's refusal")
	require.Equal(t, int64(2), hits.n.Load())

	advance(9 * time.Second)
	refused()
	require.Equal(t, int64(2), hits.n.Load(), "still within the window")
	advance(10 * time.Second)
	refused()
	require.Equal(t, int64(3), hits.n.Load(), "the window ended: asked again")

	tok, err := f.idp.ClientToken(t.Context(), "bob", "")
	require.NoError(t, err)
	_, err = s.Token(t.Context(), identity.Principal{Issuer: f.idp.Issuer(), Subject: "bob"}.WithToken(tok))
	require.Error(t, err)
	require.Equal(t, int64(4), hits.n.Load(), "a new access token of bob's is asked about")
	assert.Equal(t, uint64(3), s.Stats().Refused)
	assert.Equal(t, uint64(cached)+1, s.Stats().RefusedCached)
}

// The kept refusals are bounded as the tokens are (MaxEntries): a
// principal's refusal pushed out by another's is asked about again.
func TestKeptRefusalsHoldAtMostMaxEntries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	hits := &countingTransport{}
	s := f.source(outbound.TokenExchange, func(o *outbound.Options) {
		o.MaxEntries, o.Auth.TokenURL, o.HTTPClient = 1, f.idp.TokenURL(), &http.Client{Transport: hits}
	})
	bob2 := identity.Principal{Issuer: f.idp.Issuer(), Subject: "bob2"}.WithToken(f.bob.Token())
	for _, pr := range []identity.Principal{f.bob, f.bob, bob2, bob2, f.bob} {
		_, err := s.Token(t.Context(), pr)
		require.Error(t, err)
	}
	assert.Equal(t, int64(3), hits.n.Load(), "bob, bob2, then bob again (his refusal was pushed out)")
}
