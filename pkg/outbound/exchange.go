package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/vmcp/vmcp/pkg/config"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// RFC 8693 names.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// Bounds of a token endpoint's answer.
const (
	maxAnswer       = 1 << 20          // bytes read of a token response
	defaultLifetime = time.Minute      // an answer without expires_in
	maxMargin       = 30 * time.Second // a token is renewed this long before exp at most
)

// issued is a token and how long it lives.
type issued struct {
	token    string
	lifetime time.Duration
}

// useBy is when t stops being handed out: before exp by a quarter of its
// lifetime, at most maxMargin.
func (t issued) useBy(now time.Time) time.Time {
	return now.Add(t.lifetime - min(t.lifetime/4, maxMargin))
}

// fetch asks the token endpoint for a token: an exchange of subject, or
// client_credentials; counted by outcome.
func (s *Source) fetch(ctx context.Context, subject string) (issued, error) {
	u, err := s.url.get(ctx, s.o.HTTPClient)
	var t issued
	if err == nil {
		if s.PerPrincipal() {
			t, err = s.exchange(ctx, u, subject)
		} else {
			t, err = s.clientCredentials(ctx, u)
		}
	}
	var e *Error
	switch {
	case err == nil:
		s.issued.Add(1)
		s.count(OutcomeIssued)
		return t, nil
	case errors.As(err, &e) && e.Code != "":
		s.refused.Add(1)
		s.count(OutcomeRefused)
		return issued{}, err
	default:
		s.failed.Add(1)
		s.count(OutcomeFailed)
		if e == nil {
			err = &Error{Backend: s.o.Backend, Err: err}
		}
		return issued{}, err
	}
}

// exchange is one RFC 8693 token exchange at u (client_secret_basic), the
// audience sent as both audience and resource (RFC 8707).
func (s *Source) exchange(ctx context.Context, u, subject string) (issued, error) {
	a := s.o.Auth
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
		"audience":             {a.Audience},
		"resource":             {a.Audience},
	}
	if len(a.Scopes) > 0 {
		form.Set("scope", strings.Join(a.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return issued{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(a.ClientID), url.QueryEscape(a.ClientSecret)) // RFC 6749 §2.3.1
	resp, err := s.o.HTTPClient.Do(req)
	if err != nil {
		return issued{}, errors.New("token endpoint unreachable") // the cause may quote the request
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
		Error       string  `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	derr := json.Unmarshal(raw, &body)
	switch {
	case body.Error != "":
		return issued{}, &Error{Backend: s.o.Backend, Code: oauthCode(body.Error), Status: resp.StatusCode}
	case resp.StatusCode != http.StatusOK || derr != nil || body.AccessToken == "":
		return issued{}, fmt.Errorf("token endpoint answered HTTP %d without a token", resp.StatusCode)
	}
	return issued{token: body.AccessToken, lifetime: lifetime(body.ExpiresIn)}, nil
}

// clientCredentials gets vmcp's own token at u (golang.org/x/oauth2).
func (s *Source) clientCredentials(ctx context.Context, u string) (issued, error) {
	a := s.o.Auth
	cc := clientcredentials.Config{ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: u, Scopes: a.Scopes,
		AuthStyle: oauth2.AuthStyleInHeader, EndpointParams: url.Values{"audience": {a.Audience}, "resource": {a.Audience}}}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, s.o.HTTPClient))
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode != "":
		return issued{}, &Error{Backend: s.o.Backend, Code: oauthCode(re.ErrorCode), Status: re.Response.StatusCode}
	case errors.As(err, &re):
		return issued{}, fmt.Errorf("token endpoint answered HTTP %d without a token", re.Response.StatusCode)
	case err != nil:
		return issued{}, errors.New("token endpoint unreachable or its answer unreadable")
	}
	return issued{token: tok.AccessToken, lifetime: lifetime(float64(tok.ExpiresIn))}, nil
}

// lifetime is an expires_in (seconds) as a duration; none or nonsense is
// defaultLifetime.
func lifetime(sec float64) time.Duration {
	if sec <= 0 || sec > 1e7 {
		return defaultLifetime
	}
	return time.Duration(sec * float64(time.Second))
}

// oauthCode is an error code as RFC 6749 allows it (%x20-21 / %x23-5B /
// %x5D-7E), at most 64 bytes; anything else is "invalid_answer".
func oauthCode(c string) string {
	if len(c) > 64 {
		return "invalid_answer"
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
			return "invalid_answer"
		}
	}
	return c
}

// tokenURL is the token endpoint: fixed, or discovered from the issuer
// (its token_endpoint) once and kept; a failed discovery is retried by
// the next request.
type tokenURL struct {
	fixed, issuer string

	mu  sync.Mutex
	got string
}

func (t *tokenURL) get(ctx context.Context, hc *http.Client) (string, error) {
	if t.fixed != "" {
		return t.fixed, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.got != "" {
		return t.got, nil
	}
	u := strings.TrimSuffix(t.issuer, "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("discovery of the token endpoint: %w", err)
	}
	defer resp.Body.Close()
	var doc struct {
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&doc); err != nil || doc.TokenEndpoint == "" {
		return "", fmt.Errorf("discovery document %s (HTTP %d) names no token_endpoint", u, resp.StatusCode)
	}
	t.got = doc.TokenEndpoint
	return t.got, nil
}

// Type names (config.OutboundAuth.Type) re-exported for callers.
const (
	TokenExchange     = config.OutboundTokenExchange
	ClientCredentials = config.OutboundClientCredentials
)
