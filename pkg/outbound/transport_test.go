package outbound_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/outbound"
)

// recorder is a backend that answers 401 to tokens in revoked and records
// what each request carried (token, body).
type recorder struct {
	mu      sync.Mutex
	revoked map[string]bool
	all     bool     // every token is refused
	seen    []string // "token body"
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.seen = append(r.seen, tok+" "+string(body))
	bad := r.all || r.revoked[tok]
	r.mu.Unlock()
	if bad {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

func TestTransportResendsOnceWithAFreshTokenAfterA401(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.source(outbound.TokenExchange, nil)
	first, err := s.Token(t.Context(), f.alice)
	require.NoError(t, err)
	rec := &recorder{revoked: map[string]bool{first: true}}
	be := httptest.NewServer(rec)
	t.Cleanup(be.Close)
	hc := &http.Client{Transport: &outbound.Transport{Base: http.DefaultTransport, Source: s,
		Principal: func(*http.Request) identity.Principal { return f.alice }}}

	resp, err := hc.Post(be.URL, "application/json", strings.NewReader(`{"id":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, rec.seen, 2)
	assert.Equal(t, first+` {"id":1}`, rec.seen[0])
	fresh, _, _ := strings.Cut(rec.seen[1], " ")
	assert.NotEqual(t, first, fresh)
	assert.Equal(t, fresh+` {"id":1}`, rec.seen[1], "the same body again")
	assert.Equal(t, uint64(1), s.Stats().Rejected)

	rec.mu.Lock()
	rec.all = true
	rec.mu.Unlock()
	resp, err = hc.Get(be.URL) // refused again after the renewal: the 401 is the answer
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Len(t, rec.seen, 4, "one resend only")
}

func TestTransportSendsNothingWithoutAToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	s := f.source(outbound.TokenExchange, nil)
	rec := &recorder{}
	be := httptest.NewServer(rec)
	t.Cleanup(be.Close)
	for _, pr := range []identity.Principal{f.bob, {}} { // refused; anonymous
		hc := &http.Client{Transport: &outbound.Transport{Base: http.DefaultTransport, Source: s,
			Principal: func(*http.Request) identity.Principal { return pr }}}
		_, err := hc.Post(be.URL, "application/json", strings.NewReader(`{}`))
		require.Error(t, err)
		assert.NotContains(t, err.Error(), f.bob.Token())
	}
	assert.Empty(t, rec.seen, "the backend never got a request without its own token")
}
