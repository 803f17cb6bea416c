// Package outbound gives vmcp a credential of its own for each backend
// that needs one (a backend's `auth` key), since MCP authorization forbids
// passing the client's token through: RFC 8693 token exchange of the
// client's validated access token for one whose audience is the backend
// (token_exchange), or vmcp's own client_credentials token. Tokens are
// cached per principal and backend until shortly before they expire; one
// exchange serves concurrent requests (singleflight); a backend's 401
// renews once (Transport). Tokens and secrets never appear in errors,
// logs, metrics or Stats.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"golang.org/x/sync/singleflight"
)

// Outcomes of a token request, the outcome label of Options.Counter.
const (
	OutcomeIssued   = "issued"   // the token endpoint issued a token
	OutcomeRefused  = "refused"  // it answered an OAuth error (invalid_grant, ...)
	OutcomeFailed   = "failed"   // no answer, or one that is not OAuth
	OutcomeRejected = "rejected" // the backend answered 401 to an issued token
	// OutcomeRefusedCached is a request failed by a refusal kept from the
	// last refusalTTL (refusal.go): the endpoint was not asked again.
	OutcomeRefusedCached = "refused_cached"
)

// flightTimeout bounds one token request shared by concurrent callers (it
// outlives any one caller's cancellation).
const flightTimeout = 30 * time.Second

// Options configure one backend's Source.
type Options struct {
	Backend string              // the backend's name (errors, metrics)
	Auth    config.OutboundAuth // type, token_url, client, audience, scopes
	// Issuer is the top-level auth.issuer, whose discovery document gives
	// the token endpoint when Auth.TokenURL is "".
	Issuer     string
	HTTPClient *http.Client     // for the token endpoint (default http.DefaultClient)
	Now        func() time.Time // clock (default time.Now)
	// Counter counts token requests by backend, type and outcome (nil:
	// none); it never has a per-user label.
	Counter *prometheus.CounterVec
	// MaxEntries bounds the cached tokens, and apart from them the kept
	// refusals (default 10000 each).
	MaxEntries int
}

// Source issues one backend's outbound tokens. Safe for concurrent use.
type Source struct {
	o       Options
	cache   *cache
	refusal *refusals
	flight  singleflight.Group
	url     tokenURL

	issued, refused, failed, rejected, refusedCached atomic.Uint64
}

// New returns the Source for o (no I/O until the first Token).
func New(o Options) *Source {
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 10000
	}
	return &Source{o: o, cache: newCache(o.MaxEntries), refusal: newRefusals(o.MaxEntries), url: tokenURL{fixed: o.Auth.TokenURL, issuer: o.Issuer}}
}

// Type is the configured auth type (token_exchange, client_credentials).
func (s *Source) Type() string { return s.o.Auth.Type }

// PerPrincipal reports whether tokens are per principal (token_exchange).
func (s *Source) PerPrincipal() bool { return s.o.Auth.Type == config.OutboundTokenExchange }

// ErrNoSubject fails a token exchange for a request that carries no
// validated access token (an anonymous principal).
var ErrNoSubject = errors.New("token exchange needs the client's validated access token (vmcp's top-level auth)")

// Token returns pr's token for the backend (client_credentials: vmcp's
// own, whatever pr), from the cache or by one request to the token
// endpoint shared by concurrent callers. A refusal of pr's subject token
// in the last refusalTTL is returned again without asking (refusal.go).
// The error is an *Error.
func (s *Source) Token(ctx context.Context, pr identity.Principal) (string, error) {
	key, err := s.key(pr)
	if err != nil {
		return "", err
	}
	if tok, ok := s.cache.get(key, s.o.Now()); ok {
		return tok, nil
	}
	if err := s.keptRefusal(key, pr.Token()); err != nil {
		return "", err
	}
	ch := s.flight.DoChan(key, func() (any, error) {
		if tok, ok := s.cache.get(key, s.o.Now()); ok { // a flight just ended
			return tok, nil
		}
		if err := s.keptRefusal(key, pr.Token()); err != nil { // one just ended refused
			return "", err
		}
		return s.flightFetch(ctx, key, pr.Token())
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		return "", &Error{Backend: s.o.Backend, Err: ctx.Err()}
	}
}

// flightFetch is one flight's token request for key: an issued token is
// cached, a refusal kept.
func (s *Source) flightFetch(ctx context.Context, key, subject string) (any, error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flightTimeout)
	defer cancel()
	t, err := s.fetch(fctx, subject)
	now := s.o.Now()
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		s.refusal.put(key, subject, e, now)
	}
	if err != nil {
		return "", err
	}
	s.refusal.forget(key)
	s.cache.put(key, t.token, t.useBy(now), now)
	return t.token, nil
}

// keptRefusal is the refusal of subject for key kept from the last
// refusalTTL, counted (nil: none).
func (s *Source) keptRefusal(key, subject string) error {
	e := s.refusal.get(key, subject, s.o.Now())
	if e == nil {
		return nil
	}
	s.refusedCached.Add(1)
	s.count(OutcomeRefusedCached)
	return e
}

// Renew drops stale, the token the backend answered 401 to, from pr's
// cache entry (if it is still there) and returns a fresh one (Token).
func (s *Source) Renew(ctx context.Context, pr identity.Principal, stale string) (string, error) {
	key, err := s.key(pr)
	if err != nil {
		return "", err
	}
	s.rejected.Add(1)
	s.count(OutcomeRejected)
	s.cache.drop(key, stale)
	return s.Token(ctx, pr)
}

// key is pr's cache key: "" for client_credentials (one token for all).
func (s *Source) key(pr identity.Principal) (string, error) {
	if !s.PerPrincipal() {
		return "", nil
	}
	if pr.Anonymous() || pr.Token() == "" {
		return "", &Error{Backend: s.o.Backend, Err: ErrNoSubject}
	}
	return pr.Key(), nil
}

// Stats are a backend's outbound token counts, for /status.
type Stats struct {
	Type     string `json:"type"`     // token_exchange or client_credentials
	Issued   uint64 `json:"issued"`   // tokens the endpoint issued
	Refused  uint64 `json:"refused"`  // OAuth error answers
	Failed   uint64 `json:"failed"`   // other failures
	Rejected uint64 `json:"rejected"` // backend 401s that renewed a token
	Cached   int    `json:"cached"`   // tokens held now
	// RefusedCached counts requests failed by a kept refusal (refusal.go)
	// without asking the endpoint.
	RefusedCached uint64 `json:"refusedCached"`
}

// Stats returns s's counts.
func (s *Source) Stats() Stats {
	return Stats{Type: s.Type(), Issued: s.issued.Load(), Refused: s.refused.Load(), Failed: s.failed.Load(),
		Rejected: s.rejected.Load(), Cached: s.cache.len(), RefusedCached: s.refusedCached.Load()}
}

func (s *Source) count(outcome string) {
	if s.o.Counter != nil {
		s.o.Counter.WithLabelValues(s.o.Backend, s.Type(), outcome).Inc()
	}
}

// Error is a failed token request: Code is the token endpoint's OAuth
// error code (RFC 6749 §5.2) when it refused, else Err says what failed.
// It never holds a token or secret.
type Error struct {
	Backend string
	Code    string // invalid_grant, invalid_target, ... ("" when not refused)
	Status  int    // the endpoint's HTTP status (0: none)
	Err     error
}

// Error names the backend and the OAuth code, or the cause.
func (e *Error) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("backend %q: the token endpoint refused vmcp's token request for it: %s (HTTP %d)", e.Backend, e.Code, e.Status)
	}
	return fmt.Sprintf("backend %q: no token for it: %v", e.Backend, e.Err)
}

// Unwrap is the cause (nil for a refusal).
func (e *Error) Unwrap() error { return e.Err }
