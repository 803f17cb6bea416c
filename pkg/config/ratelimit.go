package config

import (
	"fmt"
	"slices"
	"time"
)

// RateLimit is one rule of the rate_limits list: the requests that reach
// a backend (tools/call, prompts/get, resources/read, completion/complete)
// of the principals When matches, on the items the patterns name, are
// limited to Requests per Period (a GCRA, bursts up to Burst). Every
// matching rule counts a request; one over any of them is refused.
type RateLimit struct {
	When AuthzMatch `yaml:"when"` // empty: every principal (anonymous too)
	// Backends, Tools, Prompts and Resources are patterns as in
	// authorization ("*" matches any run of characters); at least one.
	// A completion matches by its backend only.
	Backends  []string `yaml:"backends"`
	Tools     []string `yaml:"tools"`
	Prompts   []string `yaml:"prompts"`
	Resources []string `yaml:"resources"`
	// Per is "principal" (default: one budget per principal; all anonymous
	// clients share one) or "global" (one budget for everyone).
	Per      string   `yaml:"per"`
	Requests int      `yaml:"requests"` // per Period, at least 1
	Period   Duration `yaml:"period"`   // required, at least 1ms
	Burst    int      `yaml:"burst"`    // requests allowed at once; default Requests
	// OnStoreError is what a request gets while the shared store (Redis)
	// cannot be asked: "deny" (default) or "allow"; counted either way.
	OnStoreError string `yaml:"on_store_error"`
}

// Values of RateLimit.Per and RateLimit.OnStoreError.
const (
	PerPrincipal = "principal"
	PerGlobal    = "global"
	StoreAllow   = "allow"
	StoreDeny    = "deny"
)

// Items is the rule's patterns as an authorization items block.
func (r *RateLimit) Items() *AuthzItems {
	return &AuthzItems{Backends: r.Backends, Tools: r.Tools, Prompts: r.Prompts, Resources: r.Resources}
}

// applyRateLimitDefaults fills per, burst and on_store_error.
func (c *Config) applyRateLimitDefaults() {
	for i := range c.RateLimits {
		r := &c.RateLimits[i]
		if r.Per == "" {
			r.Per = PerPrincipal
		}
		if r.Burst == 0 {
			r.Burst = r.Requests
		}
		if r.OnStoreError == "" {
			r.OnStoreError = StoreDeny
		}
	}
}

// checkRateLimitsExplicit checks what defaults would hide: a written
// burst below 1.
func checkRateLimitsExplicit(ps *problems, c *Config) {
	for i, r := range c.RateLimits {
		if k := joinIndex("rate_limits", i) + ".burst"; ps.ix.set(k) && r.Burst < 1 {
			ps.add(k, fmt.Sprintf("must be at least 1, got %d", r.Burst))
		}
	}
}

// validateRateLimits checks every rule: claims and patterns as in
// authorization, at least one pattern, requests at least 1, a
// period of at least 1ms, known per and on_store_error values.
func validateRateLimits(ps *problems, c *Config, names map[string]bool) {
	for i, r := range c.RateLimits {
		p := joinIndex("rate_limits", i)
		if r.Items().empty() {
			ps.add(p, `rule needs tools, prompts, resources or backends patterns (backends: ["*"] limits every request)`)
		}
		checkClaims(ps, p, r.When.Claims)
		checkItems(ps, p, r.Items(), names)
		if r.Requests < 1 {
			ps.add(p+".requests", fmt.Sprintf("must be at least 1, got %d", r.Requests))
		}
		if r.Period.D() < time.Millisecond {
			ps.add(p+".period", fmt.Sprintf("must be at least 1ms, got %s", r.Period))
		}
		if !slices.Contains([]string{PerPrincipal, PerGlobal}, r.Per) {
			ps.add(p+".per", fmt.Sprintf("want principal or global, got %q", r.Per))
		}
		if !slices.Contains([]string{StoreAllow, StoreDeny}, r.OnStoreError) {
			ps.add(p+".on_store_error", fmt.Sprintf("want allow or deny, got %q", r.OnStoreError))
		}
	}
}
