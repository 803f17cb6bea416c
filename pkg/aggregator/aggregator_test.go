package aggregator

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/config"
)

type change struct {
	kinds    []Kind
	old, new *Catalogue
}

func newRecorded(t *testing.T, p Policy) (*Aggregator, *[]change, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	a := New(p, slog.New(slog.NewTextHandler(&buf, nil)))
	var changes []change
	a.OnChange(func(old, new *Catalogue, kinds []Kind) {
		changes = append(changes, change{kinds, old, new})
	})
	return a, &changes, &buf
}

func TestAggregatorOnChange(t *testing.T) {
	a, changes, _ := newRecorded(t, Policy{Order: []string{"a", "b"}})
	require.NotNil(t, a.Current())
	assert.Empty(t, a.Current().Tools)
	assert.Zero(t, a.Version())

	steps := []struct {
		name  string
		do    func()
		kinds []Kind // nil: no callback
	}{
		{"first tools", func() { a.Update(Inventory{Backend: "a", Tools: tools("t")}) }, []Kind{KindTools}},
		{"identical update", func() { a.Update(Inventory{Backend: "a", Tools: tools("t")}) }, nil},
		{"add resources and prompts", func() {
			a.Update(Inventory{Backend: "a", Tools: tools("t"), Prompts: prompts("p"),
				Resources: []*mcp.Resource{{URI: "file:///r"}}})
		}, []Kind{KindResources, KindPrompts}},
		{"description change", func() {
			a.Update(Inventory{Backend: "a", Tools: []*mcp.Tool{{Name: "t", Description: "changed"}},
				Prompts: prompts("p"), Resources: []*mcp.Resource{{URI: "file:///r"}}})
		}, []Kind{KindTools}},
		{"second backend templates", func() {
			a.Update(Inventory{Backend: "b", Templates: []*mcp.ResourceTemplate{{URITemplate: "x://{y}"}}})
		}, []Kind{KindTemplates}},
		{"remove unknown backend", func() { a.Remove("zzz") }, nil},
		{"remove b", func() { a.Remove("b") }, []Kind{KindTemplates}},
	}
	for _, s := range steps {
		n := len(*changes)
		s.do()
		if s.kinds == nil {
			assert.Len(t, *changes, n, s.name)
			continue
		}
		require.Len(t, *changes, n+1, s.name)
		got := (*changes)[n]
		assert.Equal(t, s.kinds, got.kinds, s.name)
		assert.Same(t, a.Current(), got.new, s.name)
		assert.NotSame(t, got.old, got.new, s.name)
	}
	assert.Equal(t, uint64(5), a.Version())
	assert.NoError(t, a.LastError())
}

func TestAggregatorRerouteWithoutListChange(t *testing.T) {
	a, changes, buf := newRecorded(t, Policy{Order: []string{"a", "b"}})
	res := []*mcp.Resource{{URI: "file:///r"}}
	a.Update(Inventory{Backend: "a", Resources: res})
	a.Update(Inventory{Backend: "b", Resources: res})
	assert.Contains(t, buf.String(), "winner=a loser=b")
	v := a.Version()
	require.Len(t, *changes, 1)

	a.Remove("a") // same advertised list, but now routed to b
	assert.Len(t, *changes, 1)
	assert.Equal(t, v+1, a.Version())
	r, ok := a.Current().Resource("file:///r")
	require.True(t, ok)
	assert.Equal(t, "b", r.Backend)
}

// Under manual, an unresolved collision must give the same catalogue in
// any order of arrival (issue 2: deterministic): the colliding name is
// withheld from every claimant, loudly, and comes back once resolved.
func TestManualCollisionWithholdsTheNameInAnyArrivalOrder(t *testing.T) {
	for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
		a, _, buf := newRecorded(t, Policy{Strategy: config.StrategyManual, Order: []string{"a", "b"}})
		inv := map[string]Inventory{
			"a": {Backend: "a", Tools: tools("search", "only_a")},
			"b": {Backend: "b", Tools: tools("search")},
		}
		for _, name := range order {
			a.Update(inv[name])
		}
		require.ErrorIs(t, a.LastError(), ErrUnresolvedConflict, "arrival %v", order)
		assert.Equal(t, []string{"only_a"}, toolNames(a.Current()), "arrival %v", order)
		assert.Contains(t, buf.String(), "withheld")

		a.Update(Inventory{Backend: "b", Tools: tools("other")})
		require.NoError(t, a.LastError())
		assert.Equal(t, []string{"only_a", "other", "search"}, toolNames(a.Current()))
	}
}

func TestAggregatorConcurrentReads(t *testing.T) {
	a := New(Policy{Order: []string{"a", "b"}}, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := a.Current()
				for _, tool := range c.Tools {
					_, r, ok := c.Tool(tool.Name)
					if !ok || r.Backend == "" {
						t.Errorf("bad route for %q", tool.Name)
					}
				}
				c.Resource("file:///x/1")
			}
		}()
	}
	for i := range 200 {
		b := []string{"a", "b"}[i%2]
		a.Update(Inventory{Backend: b, Tools: tools(fmt.Sprint("t", i%7)),
			Templates: []*mcp.ResourceTemplate{{URITemplate: "file:///x/{n}"}}})
		if i%10 == 0 {
			a.Remove(b)
		}
	}
	close(stop)
	wg.Wait()
	assert.NoError(t, a.LastError())
}

// TestAnnouncedListChangeSwallowedWhenListsEqual pins a backend's
// list_changed being lost when its refreshed lists merge to the same
// catalogue (a tool re-registered unchanged): the announced kind must
// still reach OnChange, and only once.
func TestAnnouncedListChangeSwallowedWhenListsEqual(t *testing.T) {
	a, changes, _ := newRecorded(t, Policy{})
	inv := Inventory{Backend: "a", Tools: []*mcp.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}}}
	a.Update(inv)
	require.Len(t, *changes, 1)
	a.Update(inv)
	require.Len(t, *changes, 1, "an unannounced equal inventory is no change")
	inv.Announced = []Kind{KindTools}
	a.Update(inv)
	require.Len(t, *changes, 2)
	assert.Equal(t, []Kind{KindTools}, (*changes)[1].kinds)
	a.Remove("b") // another rebuild does not repeat the announcement
	inv.Announced = nil
	a.Update(inv)
	assert.Len(t, *changes, 2)
}

func TestConflictsListsWhatTheLastBuildResolved(t *testing.T) {
	a := New(Policy{Order: []string{"a", "b"}}, nil)
	assert.Empty(t, a.Conflicts())
	res := func(uri string) []*mcp.Resource { return []*mcp.Resource{{URI: uri, Name: uri}} }
	a.Update(Inventory{Backend: "a", Resources: res("file:///x")})
	a.Update(Inventory{Backend: "b", Resources: append(res("file:///x"), res("file:///y")...)})
	assert.Equal(t, []Conflict{{Kind: KindResources, Key: "file:///x", Winner: "a", Loser: "b"}}, a.Conflicts())
	a.Remove("a")
	assert.Empty(t, a.Conflicts(), "resolved conflicts end with the build that no longer has them")
}
