package policy

import (
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
)

// Matcher is one rule's selection outside the access policy (a rate
// limit's): the principals its claims select and the items its patterns
// name, with exactly the authorization rules' semantics.
type Matcher struct {
	claims map[string][]string
	items  items
}

// NewMatcher compiles claims (empty: every principal) and the patterns
// of it (validated by pkg/config).
func NewMatcher(claims map[string][]string, it *config.AuthzItems) *Matcher {
	return &Matcher{claims: claims, items: compile(it)}
}

// Principal reports whether pr holds every claim of the rule.
func (m *Matcher) Principal(pr identity.Principal) bool { return matchClaims(m.claims, pr.Claims) }

// Item reports whether the rule's patterns name the item of kind k
// advertised as name on backend; a kind outside the four (a completion)
// matches by its backend only.
func (m *Matcher) Item(k aggregator.Kind, backend, name string) bool {
	return m.items.match(k, backend, name)
}
