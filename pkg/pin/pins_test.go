package pin

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
)

func tool(desc string) *mcp.Tool {
	return &mcp.Tool{Name: "echo", Description: desc, InputSchema: map[string]any{"type": "object"}}
}

func names(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name+":"+t.Description)
	}
	return out
}

func newCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"backend", "outcome"})
}

func TestHashIgnoresKeyOrderAndTitleButNotSchemaOrAnnotations(t *testing.T) {
	a := &mcp.Tool{Name: "x", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number", "maximum": 10}}}}
	b := &mcp.Tool{Name: "x", Title: "other title", InputSchema: map[string]any{"properties": map[string]any{"n": map[string]any{"maximum": 10, "type": "number"}}, "type": "object"}}
	assert.Equal(t, Hash(a), Hash(b))
	c := *a
	c.InputSchema = map[string]any{"type": "object"}
	assert.NotEqual(t, Hash(a), Hash(&c), "input schema")
	d := *a
	d.OutputSchema = map[string]any{"type": "object"}
	assert.NotEqual(t, Hash(a), Hash(&d), "output schema")
	e := *a
	e.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	assert.NotEqual(t, Hash(a), Hash(&e), "annotations")
	f := *a
	f.Description = "now exfiltrates"
	assert.NotEqual(t, Hash(a), Hash(&f), "description")
}

func TestEachModeOnAChangedDescription(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		listed  []string
		outcome string
		pending int
	}{
		{config.ToolChangesWarn, []string{"echo:v2"}, OutcomeWarned, 1},
		{config.ToolChangesDeny, nil, OutcomeDenied, 1},
		{config.ToolChangesAllow, []string{"echo:v2"}, OutcomeAllowed, 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			c := newCounter()
			p := New(Options{Mode: tc.mode, Counter: c})
			defer p.Close()
			require.Equal(t, []string{"echo:v1"}, names(p.Admit("b", []*mcp.Tool{tool("v1")})))
			require.Equal(t, tc.listed, names(p.Admit("b", []*mcp.Tool{tool("v2")})))
			assert.Equal(t, tc.listed, names(p.Admit("b", []*mcp.Tool{tool("v2")})), "the same again")
			assert.Equal(t, 1.0, testutil.ToFloat64(c.WithLabelValues("b", tc.outcome)), "counted once per change, not per list")
			assert.Len(t, p.Changes(), tc.pending)
			assert.Equal(t, []string{"echo:v1"}, names(p.Admit("b", []*mcp.Tool{tool("v1")})), "back to the pinned definition")
			assert.Empty(t, p.Changes())
		})
	}
}

func TestAcceptListsTheDeniedToolAndNotifies(t *testing.T) {
	var mu sync.Mutex
	notified := 0
	p := New(Options{Mode: config.ToolChangesDeny, OnChange: func() { mu.Lock(); notified++; mu.Unlock() }})
	defer p.Close()
	p.Admit("b", []*mcp.Tool{tool("v1")})
	require.ErrorIs(t, p.Accept("b", "echo"), ErrNoChange)
	require.Empty(t, p.Admit("b", []*mcp.Tool{tool("v2")}))
	require.NoError(t, p.Accept("b", "echo"))
	assert.Equal(t, 1, notified)
	assert.Equal(t, []string{"echo:v2"}, names(p.Admit("b", []*mcp.Tool{tool("v2")})))
	assert.Empty(t, p.Changes())
}

// An accept entry applies once, when a load brings it: it accepts the
// pending change, or arms the next change seen; a reload keeping it (a
// SIGHUP for log rotation) accepts nothing more. Removed and named again,
// it is new again.
func TestConfigNamingAToolAcceptsItsChangeOnce(t *testing.T) {
	p := New(Options{Mode: config.ToolChangesDeny})
	defer p.Close()
	accept := config.Security{ToolChanges: config.ToolChangesDeny, AcceptToolChanges: []config.ToolRef{{Backend: "b", Tool: "echo"}}}
	p.Admit("b", []*mcp.Tool{tool("v1")})
	require.Empty(t, p.Admit("b", []*mcp.Tool{tool("v2")}))
	p.Configure(accept)
	assert.Equal(t, []string{"echo:v2"}, names(p.Admit("b", []*mcp.Tool{tool("v2")})), "pending change accepted by the reload")

	p.Configure(accept)
	assert.Empty(t, p.Admit("b", []*mcp.Tool{tool("v3")}), "the same entry reloaded accepts nothing more")

	p.Configure(config.Security{ToolChanges: config.ToolChangesDeny})
	p.Configure(accept)
	assert.Equal(t, []string{"echo:v3"}, names(p.Admit("b", []*mcp.Tool{tool("v3")})), "removed, then named again: new again")

	q := New(Options{Mode: config.ToolChangesDeny})
	defer q.Close()
	q.Configure(accept) // at start: nothing pending, so the next change is armed
	q.Admit("b", []*mcp.Tool{tool("v1")})
	q.Configure(accept)
	assert.Equal(t, []string{"echo:v2"}, names(q.Admit("b", []*mcp.Tool{tool("v2")})), "armed by its first load, kept by the reload")
	q.Configure(accept)
	assert.Empty(t, q.Admit("b", []*mcp.Tool{tool("v3")}), "taken once: not re-armed by a reload")
}

// An entry naming the offered hash accepts only that definition, pending
// or seen later; another one stays withheld.
func TestConfigAcceptOfAHashAcceptsOnlyThatDefinition(t *testing.T) {
	p := New(Options{Mode: config.ToolChangesDeny})
	defer p.Close()
	p.Admit("b", []*mcp.Tool{tool("v1")})
	require.Empty(t, p.Admit("b", []*mcp.Tool{tool("v2")}))
	p.Configure(config.Security{ToolChanges: config.ToolChangesDeny,
		AcceptToolChanges: []config.ToolRef{{Backend: "b", Tool: "echo", Offered: Hash(tool("v3"))}}})
	assert.Empty(t, p.Admit("b", []*mcp.Tool{tool("v2")}), "v2 is not the definition accepted")
	assert.Equal(t, []string{"echo:v3"}, names(p.Admit("b", []*mcp.Tool{tool("v3")})), "v3 is")
	assert.Empty(t, p.Admit("b", []*mcp.Tool{tool("v4")}))
}

func TestTwoNodesOnOneRedisAgreeOnThePin(t *testing.T) {
	topo := clustertest.Standalone(t)
	prefix := topo.Prefix(t)
	rdb := topo.Client(t)
	changed := make(chan struct{}, 4)
	a := New(Options{Mode: config.ToolChangesDeny, Store: NewRedis(rdb, prefix, false)})
	defer a.Close()
	b := New(Options{Mode: config.ToolChangesDeny, Store: NewRedis(rdb, prefix, false), OnChange: func() { changed <- struct{}{} }})
	defer b.Close()

	require.Len(t, a.Admit("be", []*mcp.Tool{tool("v1")}), 1, "a pins v1 first")
	require.Empty(t, b.Admit("be", []*mcp.Tool{tool("v2")}), "b sees v2 first, but v1 is the pin")
	require.Empty(t, a.Admit("be", []*mcp.Tool{tool("v2")}))

	require.NoError(t, a.Accept("be", "echo"))
	<-changed // b heard the accept
	assert.Len(t, b.Admit("be", []*mcp.Tool{tool("v2")}), 1)
	got, err := rdb.HGet(context.Background(), prefix+"pin:be", "echo").Result()
	require.NoError(t, err)
	assert.Equal(t, Hash(tool("v2")), got)
}

// With Redis unreachable, every store failure is counted and this node's
// own pin decides: deny still withholds a change it saw itself.
func TestRedisDownFallsBackToThisNodesPin(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	c := newCounter()
	p := New(Options{Mode: config.ToolChangesDeny, Store: NewRedis(rdb, "vmcp-test-down:", false), Counter: c})
	defer p.Close()
	require.Len(t, p.Admit("b", []*mcp.Tool{tool("v1")}), 1, "first sight: pinned here")
	require.Empty(t, p.Admit("b", []*mcp.Tool{tool("v2")}), "changed against this node's pin")
	assert.Equal(t, 2.0, testutil.ToFloat64(c.WithLabelValues("b", OutcomeStoreError)))
	assert.Equal(t, 1.0, testutil.ToFloat64(c.WithLabelValues("b", OutcomeDenied)))
	require.NoError(t, p.Accept("b", "echo"), "accepted here even though Redis cannot hear it")
	assert.Len(t, p.Admit("b", []*mcp.Tool{tool("v2")}), 1)
}

// A reload from warn to deny withholds the changes already warned about.
func TestReloadToDenyWithholdsAWarnedChange(t *testing.T) {
	p := New(Options{})
	defer p.Close()
	p.Admit("b", []*mcp.Tool{tool("v1")})
	require.Len(t, p.Admit("b", []*mcp.Tool{tool("v2")}), 1, "warn (default) lists it")
	p.Configure(config.Security{ToolChanges: config.ToolChangesDeny})
	assert.Empty(t, p.Admit("b", []*mcp.Tool{tool("v2")}))
	assert.Equal(t, OutcomeDenied, p.Changes()[0].Outcome)
}

// flakyStore fails while down, else is a Memory.
type flakyStore struct {
	*Memory
	mu    sync.Mutex
	down  bool
	calls int
}

func (f *flakyStore) Pin(ctx context.Context, backend, tool, hash string) (string, error) {
	f.mu.Lock()
	down := f.down
	f.calls++
	f.mu.Unlock()
	if down {
		return "", errors.New("store down")
	}
	return f.Memory.Pin(ctx, backend, tool, hash)
}

func (f *flakyStore) set(down bool) {
	f.mu.Lock()
	f.down, f.calls = down, 0
	f.mu.Unlock()
}

// While the store is down a listing asks it once, not once per tool; the
// pins made here meanwhile are written when it is back, as first seen
// here, so a change seen during the outage stays a change.
func TestStoreOutageAskedOncePerListingAndPinsWrittenAfter(t *testing.T) {
	st := &flakyStore{Memory: NewMemory()}
	p := New(Options{Mode: config.ToolChangesDeny, Store: st})
	defer p.Close()
	st.set(true)
	tools := []*mcp.Tool{tool("v1"), {Name: "b", InputSchema: map[string]any{"type": "object"}}, {Name: "c", InputSchema: map[string]any{"type": "object"}}}
	require.Len(t, p.Admit("be", tools), 3)
	assert.Equal(t, 1, st.calls)
	require.Len(t, p.Admit("be", []*mcp.Tool{tool("v2")}), 0, "this node's pin decides")

	st.set(false)
	require.Len(t, p.Admit("be", []*mcp.Tool{tool("v2")}), 0)
	got, err := st.Memory.Pin(context.Background(), "be", "echo", "other")
	require.NoError(t, err)
	assert.Equal(t, Hash(tool("v1")), got, "the store holds v1, the definition first seen here")
}
