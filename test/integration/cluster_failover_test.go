package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// clLoad is clients calling echo in a loop through the balancer; every
// answer must be the client's own text, every failure the documented 503.
type clLoad struct {
	ok, unavailable, wrong atomic.Int64
	mu                     sync.Mutex
	other                  []string // failures that are neither
	stop                   chan struct{}
	wg                     sync.WaitGroup
}

// start runs one loop per client until stopLoad.
func (l *clLoad) start(t *testing.T, clients []*clClient) {
	l.stop = make(chan struct{})
	for i, c := range clients {
		l.wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.record(t, c, fmt.Sprintf("c%d-%d", i, seq))
			}
		})
	}
}

func (l *clLoad) record(t *testing.T, c *clClient, text string) {
	got, err := c.echo(t, text)
	switch {
	case err == nil && got == "echo:"+text:
		l.ok.Add(1)
	case err == nil:
		l.wrong.Add(1)
		l.fail(fmt.Sprintf("asked %q, answered %q", text, got))
	case strings.Contains(err.Error(), "Service Unavailable"):
		l.unavailable.Add(1)
	default:
		l.fail(err.Error())
	}
}

func (l *clLoad) fail(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.other = append(l.other, msg)
}

func (l *clLoad) stopLoad() {
	close(l.stop)
	l.wg.Wait()
}

// clFailover is a Redis deployment whose primary a test can kill.
type clFailover interface {
	Redis() clustertest.Redis
	KillPrimary()
	AwaitFailover()
}

// A Redis primary is killed while clients call tools through the
// balancer: the Sentinel-managed one, or one of a Redis Cluster's three
// (each with a replica); the Sentinel set's servers and sentinels
// require passwords of their own. During the switch requests get 503 naming Redis,
// nothing else, and no client ever gets another's answer; once the
// replica is promoted, every session works on every node again (its owner
// re-asserts the records the replica may have missed, or that expired
// during the switch) and new sessions start.
func TestClusterPrimaryKilledMidLoad(t *testing.T) {
	for name, start := range map[string]func(testing.TB) clFailover{
		"sentinel": func(t testing.TB) clFailover { return clustertest.StartSentinelsWith(t, clSentinelAuth) }, // passwords on servers and sentinels
		"cluster":  func(t testing.TB) clFailover { return clustertest.StartReplicatedCluster(t, 3) },
	} {
		t.Run(name, func(t *testing.T) { onPrimaryKilledMidLoad(t, start(t)) })
	}
}

func onPrimaryKilledMidLoad(t *testing.T, s clFailover) {
	e := clNewEnvTopo(t, s.Redis(), 3, false)
	clients := make([]*clClient, 6)
	for i := range clients {
		clients[i] = clConnect(t, e.lb.URL, clLegacy, false, nil)
	}
	load := &clLoad{}
	load.start(t, clients)
	require.Eventually(t, func() bool { return load.ok.Load() >= int64(2*len(clients)) }, 30*time.Second, 10*time.Millisecond, "the load runs")

	s.KillPrimary()
	require.Eventually(t, func() bool { return load.unavailable.Load() > 0 }, 30*time.Second, 10*time.Millisecond, "requests during the switch get 503")
	s.AwaitFailover()
	okBefore := load.ok.Load()
	require.Eventually(t, func() bool { return load.ok.Load() >= okBefore+int64(3*len(clients)) }, 30*time.Second, 10*time.Millisecond, "calls succeed again")
	load.stopLoad()

	require.Empty(t, load.other, "only 503s failed")
	require.Zero(t, load.wrong.Load(), "no answer reached another client")
	t.Logf("%d calls answered, %d got 503 during the switch", load.ok.Load(), load.unavailable.Load())
	// Each node sees the new primary on its own schedule; once every one
	// is back, every node record and session record is there again.
	require.Eventually(t, func() bool {
		for _, n := range e.nodes {
			if code, _ := clReady(t, n); code != http.StatusOK || !e.keyExists(t, e.keys.Node(n.name)) {
				return false
			}
		}
		for _, c := range clients {
			if e.owner(t, c.cs.ID()) == "" {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "every node re-asserted its records on the new primary")
	for i, c := range clients {
		for round := range len(e.nodes) { // round robin: through every node
			got, err := c.echo(t, fmt.Sprintf("after-%d-%d", i, round))
			require.NoError(t, err, "session %d works on every node after the failover", i)
			require.Equal(t, fmt.Sprintf("echo:after-%d-%d", i, round), got)
		}
	}
	fresh := clConnect(t, e.lb.URL, clLegacy, true, nil)
	got, err := fresh.echo(t, "fresh")
	require.NoError(t, err)
	require.Equal(t, "echo:fresh", got)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.rdb.Ping(ctx).Err())
}
