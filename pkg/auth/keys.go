package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

// fetchTimeout bounds one JWKS fetch or discovery.
const fetchTimeout = 10 * time.Second

// errNoKeys: the issuer's JWKS has never been fetched successfully, so no
// token can be checked (the authorization server is unreachable: 503).
var errNoKeys = errors.New("the issuer's signing keys (JWKS) could not be fetched")

// errDiscovery: OpenID Provider discovery failed (503 until it succeeds).
var errDiscovery = errors.New("OpenID Provider discovery failed")

// keySet is an oidc.KeySet over the issuer's JWKS: keys are fetched on
// first use and refetched when a token names a key (kid) none of them
// verifies (key rotation), at most once per interval, so tokens with
// made-up key IDs cannot make vmcp hammer the issuer. Verification is
// go-jose's; only asymmetric public keys are kept.
type keySet struct {
	url      string
	client   *http.Client
	interval time.Duration
	now      func() time.Time

	mu       sync.Mutex
	keys     []jose.JSONWebKey
	loaded   bool          // keys were fetched successfully at least once
	fetched  time.Time     // last fetch attempt
	lastErr  error         // of the last fetch
	inflight chan struct{} // closed when the running fetch ends; nil if none
}

// VerifySignature implements oidc.KeySet: it returns the payload of jwt if
// one of the issuer's keys verifies it (refetching the JWKS once if none
// does and the last fetch is older than the interval).
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(jwt, allowedAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, fmt.Errorf("malformed JWS: %v", err)
	}
	kid := jws.Signatures[0].Header.KeyID
	if p, ok := verifyWith(jws, k.current(), kid); ok {
		return p, nil
	}
	if err := k.refresh(ctx); err != nil {
		return nil, err
	}
	if p, ok := verifyWith(jws, k.current(), kid); ok {
		return p, nil
	}
	return nil, fmt.Errorf("no key of the issuer's JWKS verifies the signature (kid %q)", kid)
}

func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) ([]byte, bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, true
		}
	}
	return nil, false
}

func (k *keySet) current() []jose.JSONWebKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys
}

// unavailable is why a token that failed verification may still be fine:
// the last JWKS fetch failed (the issuer is unreachable), so the key it
// names may be one vmcp cannot fetch (503, not 401); nil when the last
// fetch succeeded or none was needed yet (as for a token rejected before
// its signature). The state clears with the next successful fetch.
func (k *keySet) unavailable() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastErr
}

// refresh refetches the JWKS unless the last attempt is younger than the
// interval (one second while no fetch ever succeeded); concurrent callers
// share one fetch.
func (k *keySet) refresh(ctx context.Context) error {
	k.mu.Lock()
	if ch := k.inflight; ch != nil {
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.lastErr
	}
	gap := k.interval
	if !k.loaded {
		gap = min(gap, time.Second)
	}
	if !k.fetched.IsZero() && k.now().Sub(k.fetched) < gap {
		defer k.mu.Unlock()
		if !k.loaded {
			return k.lastErr
		}
		return fmt.Errorf("unknown signing key; the issuer's JWKS was fetched less than %s ago", k.interval)
	}
	ch := make(chan struct{})
	k.inflight = ch
	k.mu.Unlock()

	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	keys, err := k.fetch(fctx)
	cancel()

	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetched, k.lastErr, k.inflight = k.now(), err, nil
	if err == nil {
		k.keys, k.loaded = keys, true
	} else if !k.loaded {
		k.lastErr = fmt.Errorf("%w: %v", errNoKeys, err)
	}
	close(ch)
	return k.lastErr
}

// fetch GETs the JWKS and keeps its asymmetric signing keys; keys of types
// go-jose does not know are skipped (RFC 7517 §5: ignore them).
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS %s: %w", k.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching JWKS %s: HTTP %s", k.url, resp.Status)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding JWKS %s: %w", k.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var key jose.JSONWebKey
		if json.Unmarshal(raw, &key) != nil || !key.Valid() || (key.Use != "" && key.Use != "sig") {
			continue
		}
		if pub := key.Public(); pub.Valid() { // nil for symmetric (oct) keys
			keys = append(keys, pub)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWKS %s has no usable signing key", k.url)
	}
	return keys, nil
}
