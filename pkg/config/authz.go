package config

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Authorization is an ordered rule list deciding, per principal, which
// tools, prompts and resources it may see (in lists) and use (calls,
// gets, reads, subscriptions, completions). Once configured, an item is
// allowed only if some rule matching the principal allows it and no rule
// matching the principal denies it (deny wins; rule order does not matter).
type Authorization struct {
	Rules []AuthzRule `yaml:"rules"` // at least one
}

// AuthzRule applies Allow and Deny to the principals When matches.
type AuthzRule struct {
	When  AuthzMatch  `yaml:"when"`  // empty: every principal (anonymous too)
	Allow *AuthzItems `yaml:"allow"` // items this rule allows
	Deny  *AuthzItems `yaml:"deny"`  // items this rule denies (wins over any allow)
}

// AuthzMatch selects principals by the claims of their access token.
type AuthzMatch struct {
	// Claims maps a claim name to accepted values: every listed claim must
	// hold one of them (a list claim, such as groups, must contain one).
	// Values compare as strings (true, 42). Empty: every principal.
	Claims map[string][]string `yaml:"claims"`
}

// AuthzItems names items by patterns in which "*" matches any run of
// characters (including none) and every other character itself.
type AuthzItems struct {
	Backends  []string `yaml:"backends"`  // every tool, prompt and resource of these backends
	Tools     []string `yaml:"tools"`     // advertised tool names
	Prompts   []string `yaml:"prompts"`   // advertised prompt names
	Resources []string `yaml:"resources"` // resource URIs, URI templates and the URIs read through them
}

// validateAuthorization checks the authorization section: written means
// at least one rule (a typo never turns the policy off); every rule names
// items to allow or deny; claim names and values and patterns are
// non-empty; a backend pattern without "*" names a configured backend
// (not checked when names is nil: a backend's name was malformed).
func validateAuthorization(ps *problems, c *Config, names map[string]bool) {
	a := c.Authorization
	if a == nil || len(a.Rules) == 0 {
		if _, written := ps.ix.entries["authorization"]; written {
			ps.add("authorization.rules", "at least one rule is required; remove the authorization key to allow every principal everything")
		}
		return
	}
	for i, r := range a.Rules {
		p := joinIndex("authorization.rules", i)
		if r.Allow.empty() && r.Deny.empty() && !nonEmptyMapping(ps.ix, p+".allow") && !nonEmptyMapping(ps.ix, p+".deny") {
			ps.add(p, "rule needs allow or deny items")
		}
		checkClaims(ps, p, r.When.Claims)
		checkItems(ps, p+".allow", r.Allow, names)
		checkItems(ps, p+".deny", r.Deny, names)
	}
}

// checkClaims checks the when.claims of the rule at p: non-empty claim
// names, at least one value each, no empty value.
func checkClaims(ps *problems, p string, claims map[string][]string) {
	for _, claim := range sortedKeys(claims) {
		cp := joinKey(p+".when.claims", claim)
		vals := claims[claim]
		if strings.TrimSpace(claim) == "" {
			ps.add(cp, "claim name must not be empty")
		}
		if len(vals) == 0 {
			ps.add(cp, "list at least one accepted value")
		}
		for j, v := range vals {
			if v == "" {
				ps.add(joinIndex(cp, j), "value must not be empty")
			}
		}
	}
}

// nonEmptyMapping reports whether path was written as a mapping with keys
// (an unknown key in it is reported by the schema walk instead).
func nonEmptyMapping(ix *index, path string) bool {
	e, ok := ix.entries[path]
	return ok && e.val.Kind == yaml.MappingNode && len(e.val.Content) > 0
}

func (it *AuthzItems) empty() bool {
	return it == nil || len(it.Backends)+len(it.Tools)+len(it.Prompts)+len(it.Resources) == 0
}

// checkItems checks one allow or deny block.
func checkItems(ps *problems, p string, it *AuthzItems, names map[string]bool) {
	if it == nil {
		return
	}
	for _, l := range []struct {
		key  string
		pats []string
	}{{"backends", it.Backends}, {"tools", it.Tools}, {"prompts", it.Prompts}, {"resources", it.Resources}} {
		for j, pat := range l.pats {
			k := joinIndex(p+"."+l.key, j)
			switch {
			case pat == "":
				ps.add(k, "pattern must not be empty")
			case slices.Contains(l.pats[:j], pat):
				ps.add(k, fmt.Sprintf("duplicate pattern %q", pat))
			case l.key == "backends" && !strings.Contains(pat, "*") && names != nil && !names[pat]:
				ps.add(k, fmt.Sprintf("unknown backend %q", pat))
			}
		}
	}
}

// deadClaimRules returns a warning for every authorization rule and rate
// limit with when.claims while auth is absent: every client is then
// anonymous, has no claims, and the rule never applies.
func deadClaimRules(ps *problems, c *Config) []Problem {
	if _, written := ps.ix.entries["auth"]; written || c.Auth != nil {
		return nil // an auth key refused as malformed still means auth is meant
	}
	var keys []string
	if c.Authorization != nil {
		for i, r := range c.Authorization.Rules {
			if len(r.When.Claims) > 0 {
				keys = append(keys, joinIndex("authorization.rules", i)+".when.claims")
			}
		}
	}
	for i, r := range c.RateLimits {
		if len(r.When.Claims) > 0 {
			keys = append(keys, joinIndex("rate_limits", i)+".when.claims")
		}
	}
	var out []Problem
	for _, key := range keys {
		if w, ok := ps.warn(SeverityWarning, key, "never matches: without auth every client is anonymous and has no claims"); ok {
			out = append(out, w)
		}
	}
	return out
}
