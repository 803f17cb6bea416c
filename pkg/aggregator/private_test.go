package aggregator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A per-principal backend's inventory had nowhere to go but the shared
// catalogue, where every principal would list and call it. Now it is its
// owner's alone: For(owner) merges it with the shared inventories by the
// same conflict resolution and routes it; another owner, and Current, do
// not have it.
func TestAPrincipalsOwnInventoryIsInItsCatalogueOnly(t *testing.T) {
	a := New(Policy{Order: []string{"open", "vault"}}, nil)
	a.Update(Inventory{Backend: "open", Tools: tools("echo")})
	a.UpdateFor("alice", Inventory{Backend: "vault", Tools: tools("secret")})

	alice := a.For("alice")
	assert.Equal(t, []string{"open_echo", "vault_secret"}, toolNames(alice))
	_, rt, ok := alice.Tool("vault_secret")
	require.True(t, ok)
	assert.Equal(t, Route{Backend: "vault", Name: "secret"}, rt)
	assert.Same(t, alice, a.For("alice"), "built once per shared catalogue")

	for _, other := range []*Catalogue{a.For("bob"), a.For(""), a.Current()} {
		assert.Equal(t, []string{"open_echo"}, toolNames(other))
		_, _, ok := other.Tool("vault_secret")
		assert.False(t, ok)
	}

	a.Update(Inventory{Backend: "open", Tools: tools("echo", "ping")})
	assert.Equal(t, []string{"open_echo", "open_ping", "vault_secret"}, toolNames(a.For("alice")), "rebuilt over the new shared catalogue")

	a.RemoveFor("alice", "vault")
	assert.Equal(t, []string{"open_echo", "open_ping"}, toolNames(a.For("alice")))
}
