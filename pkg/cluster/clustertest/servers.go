package clustertest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// setupDeadline bounds starting a Redis Cluster or a Sentinel set (and a
// failover): generous, for 2 loaded cores; every wait under it polls a
// real condition.
const setupDeadline = 60 * time.Second

func randText() string { return rand.Text()[:12] }

// startProc starts redis-server with args on a free loopback port (an
// arg's {port} is that port), waits until it answers PING and kills it
// when the test ends.
func startProc(t testing.TB, args ...string) *proc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("clustertest: redis-server is not installed (make redis installs it)")
	}
	p, err := launch(t.TempDir(), args...)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	t.Cleanup(p.Kill)
	return p
}

// launch is startProc without a test: dir holds the server's files; an
// arg's {busport} is a second free port (a cluster bus). A port another
// process took between its pick and the bind is picked again.
func launch(dir string, args ...string) (*proc, error) {
	var err error
	for range 5 {
		var p *proc
		if p, err = launchOnce(dir, args); !errors.Is(err, errPortTaken) {
			return p, err
		}
	}
	return nil, err
}

func launchOnce(dir string, args []string) (*proc, error) {
	addr, err := pickAddr()
	if err != nil {
		return nil, err
	}
	bus, err := pickAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	_, busPort, _ := net.SplitHostPort(bus)
	o, fill := redis.Options{Addr: addr}, strings.NewReplacer("{port}", port, "{busport}", busPort)
	full := []string{"--port", port}
	for i, a := range args {
		full = append(full, fill.Replace(a))
		if a == "--requirepass" && i+1 < len(args) {
			o.Password = args[i+1]
		}
	}
	full = append(full, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	return spawn(exec.Command("redis-server", full...), o)
}

// await polls cond until it holds or fails the test at setupDeadline.
func await(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := awaitCond(what, cond); err != nil {
		t.Fatalf("clustertest: %v", err)
	}
}

// awaitCond polls cond (one bounded round trip per call) until it holds
// or setupDeadline passes; what names the condition.
func awaitCond(what string, cond func(ctx context.Context) (bool, error)) error {
	deadline := time.Now().Add(setupDeadline)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ok, err := cond(ctx)
		cancel()
		if ok {
			return nil
		}
		last = err
		time.Sleep(50 * time.Millisecond) // between polls of a real condition
	}
	return fmt.Errorf("%s not reached within %s (last error: %v)", what, setupDeadline, last)
}

// StartCluster starts a Redis Cluster of n primaries (LaunchCluster) for
// the test and stops it when the test ends.
func StartCluster(t testing.TB, n int) Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("clustertest: redis-server is not installed (make redis installs it)")
	}
	c, err := LaunchCluster(n, t.TempDir())
	if c != nil {
		t.Cleanup(c.Stop)
	}
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	return Redis{Name: "cluster", Cluster: c.Addrs}
}

// Cluster is a Redis Cluster's processes (LaunchCluster).
type Cluster struct {
	Addrs []string // the primaries, host:port
	procs []*proc
}

// LaunchCluster starts n redis-server processes with cluster mode on
// loopback (no replicas, no persistence; files in dir), creates a Redis
// Cluster of n primaries over them with redis-cli --cluster create and
// waits until every node reports cluster_state:ok. On error the processes
// started are in the returned Cluster: Stop it.
func LaunchCluster(n int, dir string) (*Cluster, error) { return launchCluster(n, 0, dir) }

// launchCluster is LaunchCluster with replicas replicas per primary (in
// sync before it returns).
func launchCluster(n, replicas int, dir string) (*Cluster, error) {
	c := &Cluster{}
	total := n * (1 + replicas)
	for range total {
		p, err := launch(dir, "--cluster-enabled", "yes", "--cluster-port", "{busport}",
			"--cluster-config-file", filepath.Join(dir, "nodes-{port}.conf"), "--cluster-node-timeout", "2000",
			"--repl-diskless-sync-delay", "0")
		if err != nil {
			return c, err
		}
		c.procs, c.Addrs = append(c.procs, p), append(c.Addrs, p.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", fmt.Sprint(replicas), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), setupDeadline)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return c, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	for _, a := range c.Addrs {
		rdb := redis.NewClient(&redis.Options{Addr: a})
		err := awaitCond("cluster_state:ok on "+a, func(ctx context.Context) (bool, error) {
			info, err := rdb.ClusterInfo(ctx).Result()
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", total)) {
				return false, err
			}
			repl, err := rdb.Info(ctx, "replication").Result()
			return strings.Contains(repl, "role:master") || strings.Contains(repl, "master_link_status:up"), err
		})
		_ = rdb.Close()
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// Stop kills every process of the cluster.
func (c *Cluster) Stop() {
	for _, p := range c.procs {
		p.Kill()
	}
}

// Sentinels is a Sentinel set started by a test: one primary, one replica
// and three sentinels (quorum 2) watching them as "mymaster".
type Sentinels struct {
	Primary, Replica *proc
	sentinels        []*proc
	auth             SentinelAuth
	t                testing.TB
}

// SentinelAuth are the passwords of a Sentinel set ("": none): Password
// is the primary's and the replica's (requirepass and masterauth, the
// sentinels' auth-pass), SentinelPassword the sentinels' own requirepass.
type SentinelAuth struct{ Password, SentinelPassword string }

// SentinelMaster is the name the sentinels of StartSentinels know the primary by.
const SentinelMaster = "mymaster"

// StartSentinels starts a primary, its replica (in sync before the
// sentinels start, so they learn of it at once) and three sentinels that
// know each other (declared in their configuration), and stops them all
// when the test ends. A primary is
// declared down after 1 s without answer.
func StartSentinels(t testing.TB) *Sentinels { return StartSentinelsWith(t, SentinelAuth{}) }

// StartSentinelsWith is StartSentinels with passwords on the servers
// and/or the sentinels.
func StartSentinelsWith(t testing.TB, auth SentinelAuth) *Sentinels {
	t.Helper()
	var pw []string
	if auth.Password != "" {
		pw = []string{"--requirepass", auth.Password, "--masterauth", auth.Password}
	}
	s := &Sentinels{t: t, auth: auth, Primary: startProc(t, append(pw, "--repl-diskless-sync-delay", "0")...)} // the replica syncs at once, not after 5 s
	ph, pp, _ := net.SplitHostPort(s.Primary.Addr)
	s.Replica = startProc(t, append(pw, "--replicaof", ph, pp)...)
	await(t, "replica in sync", func(ctx context.Context) (bool, error) {
		return infoHas(ctx, s.Replica.Addr, auth.Password, "replication", "master_link_status:up")
	})
	s.startSentinels(pickAddr)
	for _, sp := range s.sentinels {
		rdb := redis.NewSentinelClient(&redis.Options{Addr: sp.Addr, Password: auth.SentinelPassword})
		await(t, "sentinel "+sp.Addr+" knows the replica and the other sentinels", func(ctx context.Context) (bool, error) {
			others, err := rdb.Sentinels(ctx, SentinelMaster).Result()
			if err != nil {
				return false, err
			}
			replicas, err := rdb.Replicas(ctx, SentinelMaster).Result()
			return len(others) == 2 && len(replicas) == 1, err
		})
		_ = rdb.Close()
	}
	return s
}

// sentinelConf is the configuration of sentinel i of addrs (ids: their
// run IDs): the primary, its replica, the other sentinels, the passwords.
func (s *Sentinels) sentinelConf(ids, addrs []string, i int) string {
	ph, pp, _ := net.SplitHostPort(s.Primary.Addr)
	var b strings.Builder
	fmt.Fprintf(&b, "sentinel myid %s\nsentinel monitor %s %s %s 2\n", ids[i], SentinelMaster, ph, pp)
	fmt.Fprintf(&b, "sentinel down-after-milliseconds %[1]s 1000\nsentinel failover-timeout %[1]s 5000\n", SentinelMaster)
	fmt.Fprintf(&b, "sentinel known-replica %s %s\n", SentinelMaster, strings.Replace(s.Replica.Addr, ":", " ", 1))
	for j, a := range addrs {
		if j != i {
			fmt.Fprintf(&b, "sentinel known-sentinel %s %s %s\n", SentinelMaster, strings.Replace(a, ":", " ", 1), ids[j])
		}
	}
	if s.auth.Password != "" {
		fmt.Fprintf(&b, "sentinel auth-pass %s %s\n", SentinelMaster, s.auth.Password)
	}
	if s.auth.SentinelPassword != "" { // also what the sentinels authenticate to each other with
		fmt.Fprintf(&b, "requirepass %s\n", s.auth.SentinelPassword)
	}
	return b.String()
}

// startSentinels starts the set's three sentinels on addresses from pick;
// each knows the others from the start (no 2 s hello rounds), so all three
// are picked first. A port another process took between its pick and the
// bind (seen in CI) stops the started ones, and the three are picked again.
func (s *Sentinels) startSentinels(pick func() (string, error)) {
	s.t.Helper()
	for range 5 {
		procs, err := s.trySentinels(pick)
		if err == nil {
			s.sentinels = procs
			return
		}
		if !errors.Is(err, errPortTaken) {
			s.t.Fatalf("clustertest: sentinel: %v", err)
		}
	}
	s.t.Fatalf("clustertest: no free ports for three sentinels")
}

// trySentinels starts three sentinels on freshly picked addresses; on an
// error it kills the ones it started.
func (s *Sentinels) trySentinels(pick func() (string, error)) ([]*proc, error) {
	dir := s.t.TempDir()
	addrs, ids := make([]string, 3), make([]string, 3)
	for i := range addrs {
		var err error
		if addrs[i], err = pick(); err != nil {
			return nil, err
		}
		ids[i] = fmt.Sprintf("%040x", i+1)
	}
	var procs []*proc
	for i := range addrs {
		p, err := startSentinel(filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i)), addrs[i], s.auth.SentinelPassword, s.sentinelConf(ids, addrs, i))
		if err != nil {
			for _, started := range procs {
				started.Kill()
			}
			return nil, err
		}
		s.t.Cleanup(p.Kill)
		procs = append(procs, p)
	}
	return procs, nil
}

// startSentinel starts redis-server in sentinel mode on addr (password:
// its requirepass) with the config body written to its own file conf
// (sentinels rewrite theirs); errPortTaken if another process has addr.
func startSentinel(conf, addr, password, body string) (*proc, error) {
	_, port, _ := net.SplitHostPort(addr)
	if err := os.WriteFile(conf, []byte("port "+port+"\n"+body), 0o600); err != nil {
		return nil, err
	}
	return spawn(exec.Command("redis-server", conf, "--sentinel", "--bind", "127.0.0.1", "--dir", filepath.Dir(conf)),
		redis.Options{Addr: addr, Password: password})
}

// Redis is the set as a topology.
func (s *Sentinels) Redis() Redis {
	addrs := make([]string, len(s.sentinels))
	for i, p := range s.sentinels {
		addrs[i] = p.Addr
	}
	return Redis{Name: "sentinel", SentinelMaster: SentinelMaster, SentinelAddrs: addrs,
		Password: s.auth.Password, SentinelPassword: s.auth.SentinelPassword}
}

// KillPrimary kills the primary (SIGKILL: no goodbye, writes not yet
// replicated are lost) and returns at once.
func (s *Sentinels) KillPrimary() { s.Primary.Kill() }

// AwaitFailover waits until every sentinel names the replica as the
// primary and the replica serves as one.
func (s *Sentinels) AwaitFailover() {
	s.t.Helper()
	for _, sp := range s.sentinels {
		rdb := redis.NewSentinelClient(&redis.Options{Addr: sp.Addr, Password: s.auth.SentinelPassword})
		await(s.t, "sentinel "+sp.Addr+" names the replica primary", func(ctx context.Context) (bool, error) {
			addr, err := rdb.GetMasterAddrByName(ctx, SentinelMaster).Result()
			return err == nil && len(addr) == 2 && net.JoinHostPort(addr[0], addr[1]) == s.Replica.Addr, err
		})
		_ = rdb.Close()
	}
	await(s.t, "the replica serves as primary", func(ctx context.Context) (bool, error) {
		return infoHas(ctx, s.Replica.Addr, s.auth.Password, "replication", "role:master")
	})
}

// infoHas reports whether INFO section of the Redis at addr (password:
// its requirepass, or "") contains line.
func infoHas(ctx context.Context, addr, password, section, line string) (bool, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Password: password, MaxRetries: -1})
	defer rdb.Close()
	info, err := rdb.Info(ctx, section).Result()
	return strings.Contains(info, line), err
}

// StartServer starts a private redis-server with extra args (for example
// "--requirepass", "pw") on a free loopback port, stops it when the test
// ends and returns its address.
func StartServer(t testing.TB, args ...string) string {
	t.Helper()
	return startProc(t, args...).Addr
}
