package pin

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
)

// clock is an injected clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

const retention = 48 * time.Hour

func named(name, desc string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}
}

// stores are the Stores retention is tested on: memory and Redis (a
// unique prefix, its keys deleted when the test ends).
func stores(t *testing.T) map[string]func(t *testing.T) Store {
	return map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemory() },
		"redis": func(t *testing.T) Store {
			topo := clustertest.Standalone(t)
			return NewRedis(topo.Client(t), topo.Prefix(t), false)
		},
	}
}

// deny is Pins in deny mode with retention on clk over s.
func deny(t *testing.T, s Store, clk *clock, maxDropped int) (*Pins, func(string, string) float64) {
	c := newCounter()
	p := New(Options{Mode: config.ToolChangesDeny, Store: s, Now: clk.Now, Counter: c, MaxDropped: maxDropped})
	t.Cleanup(p.Close)
	p.Configure(config.Security{ToolChanges: config.ToolChangesDeny, PinRetention: config.Duration(retention)})
	return p, func(b, o string) float64 { return testutil.ToFloat64(c.WithLabelValues(b, o)) }
}

// A tool its backend drops and offers again with another definition within
// security.pin_retention is still a change (no rug-pull bypass); past it
// the pin is deleted, in memory and on Redis, and the tool is pinned anew.
func TestDroppedToolPinKeptForRetentionThenDeleted(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := &clock{now: time.Unix(1_700_000_000, 0)}
			p, count := deny(t, store(t), clk, 0)
			stay := named("stay", "v1")
			require.Len(t, p.Admit("b", []*mcp.Tool{named("echo", "v1"), named("gone", "v1"), stay}), 3)
			require.Len(t, p.Admit("b", []*mcp.Tool{stay}), 1, "echo and gone dropped")

			clk.Add(retention - time.Hour)
			got := names(p.Admit("b", []*mcp.Tool{stay, named("echo", "v2")}))
			assert.Equal(t, []string{"stay:v1"}, got, "redefined within the retention: a change, withheld")
			assert.Equal(t, 1.0, count("b", OutcomeDenied))

			clk.Add(2 * time.Hour)
			p.refresh() // the periodic retain: gone was last offered past the retention
			assert.Equal(t, 1.0, count("b", OutcomeExpired))
			got = names(p.Admit("b", []*mcp.Tool{stay, named("echo", "v2"), named("gone", "v2")}))
			assert.Equal(t, []string{"stay:v1", "gone:v2"}, got, "gone's pin expired: v2 is pinned anew; echo's change still withheld")
			assert.Equal(t, 1.0, count("b", OutcomeDenied), "the same change: counted once")
		})
	}
}

// A backend a reload removed keeps its pins for the retention and then
// loses them (memory: swept at the next retain; Redis: its keys' TTL,
// refreshed while the backend is live and no longer once it is removed).
func TestRemovedBackendPinsDeletedAfterRetention(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		clk := &clock{now: time.Unix(1_700_000_000, 0)}
		m := NewMemory()
		p, count := deny(t, m, clk, 0)
		p.Admit("old", []*mcp.Tool{named("x", "v1")})
		p.Admit("b", []*mcp.Tool{named("y", "v1")})
		p.Forget([]string{"old"})
		clk.Add(retention - time.Hour)
		p.refresh()
		got, _ := m.Pin(context.Background(), "old", "x", "probe")
		require.NotEqual(t, "probe", got, "kept within the retention")
		clk.Add(2 * time.Hour)
		p.refresh() // b is live: retained; old is not: swept
		assert.Equal(t, 1.0, count("old", OutcomeExpired), "old's pin, counted as its own")
		got, _ = m.Pin(context.Background(), "old", "x", "probe")
		assert.Equal(t, "probe", got, "old's pin was deleted")
		got, _ = m.Pin(context.Background(), "b", "y", "probe")
		assert.NotEqual(t, "probe", got, "b's pin kept: b is live")
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		topo := clustertest.Standalone(t)
		rdb, prefix := topo.Client(t), topo.Prefix(t)
		clk := &clock{now: time.Unix(1_700_000_000, 0)}
		p, _ := deny(t, NewRedis(rdb, prefix, false), clk, 0)
		ctx := context.Background()
		p.Admit("old", []*mcp.Tool{named("x", "v1")})
		p.Admit("b", []*mcp.Tool{named("y", "v1")})
		for _, k := range []string{prefix + "pin:old", prefix + "pinseen:old", prefix + "pin:b"} {
			ttl := rdb.PTTL(ctx, k).Val()
			assert.Greater(t, ttl, retention-time.Hour, k)
			assert.LessOrEqual(t, ttl, retention, k)
		}
		p.Forget([]string{"old"})
		for _, k := range []string{prefix + "pin:old", prefix + "pin:b"} {
			require.True(t, rdb.PExpire(ctx, k, time.Hour).Val())
		}
		p.refresh()
		assert.Greater(t, rdb.PTTL(ctx, prefix+"pin:b").Val(), retention-time.Hour, "live: its TTL refreshed")
		assert.LessOrEqual(t, rdb.PTTL(ctx, prefix+"pin:old").Val(), time.Hour, "removed: left to expire")
	})
}

// Each backend keeps at most MaxDropped pins of tools it no longer
// offers: the oldest dropped go first, counted as evicted.
func TestDroppedPinsBoundedPerBackend(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := &clock{now: time.Unix(1_700_000_000, 0)}
			p, count := deny(t, store(t), clk, 2)
			live := []*mcp.Tool{named("t1", "v1"), named("t2", "v1"), named("t3", "v1"), named("t4", "v1")}
			p.Admit("b", live)
			for i := range live { // t1 dropped first, then t2, t3, t4
				clk.Add(time.Minute)
				p.Admit("b", live[i+1:])
			}
			assert.Equal(t, 2.0, count("b", OutcomeEvicted))
			got := names(p.Admit("b", []*mcp.Tool{named("t1", "v2"), named("t2", "v2"), named("t3", "v2"), named("t4", "v2")}))
			assert.Equal(t, []string{"t1:v2", "t2:v2"}, got, "t1 and t2 were evicted (pinned anew); t3, t4 kept: withheld")
		})
	}
}

// Close may be called twice (a server closed, then shut down by Serve).
func TestPinsCloseTwiceDoesNotPanic(t *testing.T) {
	t.Parallel()
	p := New(Options{})
	p.Close()
	assert.NotPanics(t, p.Close)
}
