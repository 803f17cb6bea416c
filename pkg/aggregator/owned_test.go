package aggregator

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// A change of a principal's own inventory swapped no shared catalogue, so
// no listener heard of it. OnOwnerChange listeners now get the owner and
// the kinds that changed, for that owner only, on a listing that differs,
// a withdrawal, an announcement, and a reload removing the backend; a
// listing equal to the last tells nobody.
func TestOwnInventoryChangeReachedNoListener(t *testing.T) {
	t.Parallel()
	a := New(Policy{Order: []string{"open", "vault"}}, nil)
	var got []OwnerChange
	var olds []*Catalogue
	a.OnOwnerChange(func(c OwnerChange) {
		olds = append(olds, c.Old)
		c.Old = nil
		assert.NotNil(t, a.For(c.Owner), "listeners may call For")
		got = append(got, c)
	})
	a.UpdateFor("alice", Inventory{Backend: "vault", Tools: tools("secret")})
	a.UpdateFor("alice", Inventory{Backend: "vault", Tools: tools("secret")})
	assert.Equal(t, []OwnerChange{{Owner: "alice", Kinds: []Kind{KindTools}}}, got, "the first listing; the same again tells nobody")

	assert.Nil(t, olds[0], "no catalogue of alice's before her first listing")
	got, olds = nil, nil
	before := a.For("alice")
	a.UpdateFor("alice", Inventory{Backend: "vault", Tools: tools("secret"), Prompts: []*mcp.Prompt{{Name: "p"}}})
	a.UpdateFor("bob", Inventory{Backend: "vault", Tools: tools("secret")})
	a.UpdateFor("alice", Inventory{Backend: "vault", Tools: tools("secret"), Prompts: []*mcp.Prompt{{Name: "p"}}, Announced: []Kind{KindResources}})
	assert.Equal(t, []OwnerChange{{Owner: "alice", Kinds: []Kind{KindPrompts}}, {Owner: "bob", Kinds: []Kind{KindTools}},
		{Owner: "alice", Kinds: []Kind{KindResources}}}, got)
	assert.Same(t, before, olds[0], "the catalogue alice saw before the change (policy.Changed compares it)")

	got = nil
	a.RemoveFor("bob", "vault")
	a.Replace(Policy{Order: []string{"open", "vault"}}, nil, []string{"vault"})
	assert.Equal(t, []OwnerChange{{Owner: "bob", Kinds: []Kind{KindTools}}, {Owner: "alice", Kinds: []Kind{KindTools, KindPrompts}}}, got)
}
