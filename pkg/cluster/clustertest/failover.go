package clustertest

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ReplicatedCluster is a Redis Cluster with one replica per primary,
// started by a test (StartReplicatedCluster), whose primaries it can kill.
type ReplicatedCluster struct {
	c      *Cluster
	t      testing.TB
	killed string // the primary killed, host:port
}

// StartReplicatedCluster starts a Redis Cluster of n primaries, each with
// one replica in sync, and stops it when the test ends. A primary is
// declared failed after 2 s without answer (cluster-node-timeout).
func StartReplicatedCluster(t testing.TB, n int) *ReplicatedCluster {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("clustertest: redis-server is not installed (make redis installs it)")
	}
	c, err := launchCluster(n, 1, t.TempDir())
	if c != nil {
		t.Cleanup(c.Stop)
	}
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	return &ReplicatedCluster{c: c, t: t}
}

// Redis is the cluster as a topology (every node is a seed).
func (r *ReplicatedCluster) Redis() Redis { return Redis{Name: "cluster", Cluster: r.c.Addrs} }

// KillPrimary kills one primary (SIGKILL) and returns at once.
func (r *ReplicatedCluster) KillPrimary() {
	r.t.Helper()
	for i, a := range r.c.Addrs {
		ok, err := infoHas(context.Background(), a, "", "replication", "role:master")
		if err == nil && ok {
			r.killed = a
			r.c.procs[i].Kill()
			return
		}
	}
	r.t.Fatal("clustertest: no primary found")
}

// AwaitFailover waits until every surviving node has flagged the killed
// primary failed and serves every slot again (its replica promoted).
func (r *ReplicatedCluster) AwaitFailover() {
	r.t.Helper()
	for _, a := range r.c.Addrs {
		if a == r.killed {
			continue
		}
		rdb := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		await(r.t, "node "+a+" flags "+r.killed+" failed and serves every slot", func(ctx context.Context) (bool, error) {
			nodes, err := rdb.ClusterNodes(ctx).Result()
			if err != nil {
				return false, err
			}
			failed := slices.ContainsFunc(strings.Split(nodes, "\n"), func(l string) bool {
				f := strings.Fields(l)
				return len(f) > 2 && strings.HasPrefix(f[1], r.killed) && slices.Contains(strings.Split(f[2], ","), "fail")
			})
			info, err := rdb.ClusterInfo(ctx).Result()
			return failed && strings.Contains(info, "cluster_state:ok"), err
		})
		_ = rdb.Close()
	}
}
