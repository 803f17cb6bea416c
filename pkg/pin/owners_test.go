package pin

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
)

// A per-principal backend's tools were pinned by name for everyone: bob's
// own definition was withheld under deny as a change of the one pinned
// at alice's listing, and alice's tool redefined for her alone was hidden
// behind bob's listing. Each principal's are pinned apart: both list
// their own; alice's change is hers (withheld from her, counted once,
// shown with her tag); accepting the tool takes her offered definition.
func TestPerPrincipalDefinitionsCollidedUnderOnePin(t *testing.T) {
	t.Parallel()
	c := newCounter()
	p := New(Options{Mode: config.ToolChangesDeny, Counter: c})
	defer p.Close()
	alice, bob := "iss\x00alice", "iss\x00bob"
	require.Equal(t, []string{"echo:alice v1"}, names(p.AdmitFor("b", alice, []*mcp.Tool{tool("alice v1")})))
	require.Equal(t, []string{"echo:bob v1"}, names(p.AdmitFor("b", bob, []*mcp.Tool{tool("bob v1")})), "bob's own definition")
	assert.Empty(t, p.Changes())

	assert.Empty(t, p.AdmitFor("b", alice, []*mcp.Tool{tool("alice v2")}), "alice's change is withheld from her")
	assert.Equal(t, []string{"echo:bob v1"}, names(p.AdmitFor("b", bob, []*mcp.Tool{tool("bob v1")})))
	assert.Empty(t, p.AdmitFor("b", alice, []*mcp.Tool{tool("alice v2")}), "not re-pinned by bob's listing")
	assert.Equal(t, 1.0, testutil.ToFloat64(c.WithLabelValues("b", OutcomeDenied)))
	changes := p.Changes()
	require.Len(t, changes, 1)
	assert.Equal(t, ownerTag(alice), changes[0].Principal)
	assert.Equal(t, Hash(tool("alice v2")), changes[0].Offered)

	require.ErrorIs(t, p.AcceptOffered("b", "echo", Hash(tool("bob v2"))), ErrOtherOffered)
	require.NoError(t, p.AcceptOffered("b", "echo", Hash(tool("alice v2"))))
	assert.Equal(t, []string{"echo:alice v2"}, names(p.AdmitFor("b", alice, []*mcp.Tool{tool("alice v2")})))
	assert.Equal(t, []string{"echo:echo v1"}, names(p.Admit("b", []*mcp.Tool{tool("echo v1")})), "the shared pin is a third one")
}

// A per-principal backend listed by ever new principals kept every
// principal's pins: a backend keeps those of MaxOwners principals; the
// least recently listed one's go, here and in the store, and come back
// as first sight.
func TestPerPrincipalPinsGrewWithEveryPrincipal(t *testing.T) {
	t.Parallel()
	store := NewMemory()
	p := New(Options{Mode: config.ToolChangesDeny, Store: store, MaxOwners: 2})
	defer p.Close()
	p.AdmitFor("b", "a", []*mcp.Tool{tool("a v1")})
	p.AdmitFor("b", "c", []*mcp.Tool{tool("c v1")})
	p.AdmitFor("b", "a", []*mcp.Tool{tool("a v1")}) // a listed again: c is the least recent
	p.AdmitFor("b", "d", []*mcp.Tool{tool("d v1")})
	store.mu.Lock()
	assert.Len(t, store.pins["b"], 2, "the store holds two principals' pins")
	_, kept := store.pins["b"][ownerTag("a")+ownerSep+"echo"]
	store.mu.Unlock()
	assert.True(t, kept, "a's pin stays")
	assert.Empty(t, p.AdmitFor("b", "a", []*mcp.Tool{tool("a v2")}), "a's pin decides")
	assert.Len(t, p.AdmitFor("b", "c", []*mcp.Tool{tool("c v2")}), 1, "c's pin went with the bound: first sight again")
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Len(t, p.seen["b"].last, 2)
}

// On Redis a principal's pins are fields of the backend's hash named by
// its tag (no identity), another node's accept is heard per principal,
// and a principal beyond the bound is deleted there (HDEL).
func TestPerPrincipalPinsOnRedis(t *testing.T) {
	topo := clustertest.Standalone(t)
	prefix := topo.Prefix(t)
	rdb := topo.Client(t)
	changed := make(chan struct{}, 4)
	a := New(Options{Mode: config.ToolChangesDeny, Store: NewRedis(rdb, prefix, false), MaxOwners: 1})
	defer a.Close()
	b := New(Options{Mode: config.ToolChangesDeny, Store: NewRedis(rdb, prefix, false), OnChange: func() { changed <- struct{}{} }})
	defer b.Close()
	alice := "iss\x00alice"
	field := ownerTag(alice) + ownerSep + "echo"
	require.Len(t, a.AdmitFor("be", alice, []*mcp.Tool{tool("v1")}), 1)
	require.Empty(t, b.AdmitFor("be", alice, []*mcp.Tool{tool("v2")}), "alice's pin holds on b")
	require.Empty(t, a.AdmitFor("be", alice, []*mcp.Tool{tool("v2")}))
	require.NoError(t, a.Accept("be", "echo"))
	<-changed // b heard alice's accept
	assert.Len(t, b.AdmitFor("be", alice, []*mcp.Tool{tool("v2")}), 1)
	got, err := rdb.HGet(context.Background(), prefix+"pin:be", field).Result()
	require.NoError(t, err)
	assert.Equal(t, Hash(tool("v2")), got)

	a.AdmitFor("be", "iss\x00bob", []*mcp.Tool{tool("bob")}) // a's bound is 1: alice's pins go
	n, err := rdb.HExists(context.Background(), prefix+"pin:be", field).Result()
	require.NoError(t, err)
	assert.False(t, n, "alice's pin deleted from the store")
}
