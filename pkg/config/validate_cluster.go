package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redisForms are the keys that name the cluster's Redis; at most one may be set.
var redisForms = []string{"cluster.redis_url", "cluster.redis_cluster", "cluster.redis_sentinel"}

// validateCluster checks the cluster section: at most one Redis form, each
// well formed; the credentials and TLS only with one; the state key and an
// advertise URL whenever there is one; the key prefix.
func validateCluster(ps *problems, c *Config) {
	cl := &c.Cluster
	form := redisForm(ps, cl)
	urlOK := validateRedisURL(ps, cl.RedisURL)
	validateHostPorts(ps, "cluster.redis_cluster", cl.RedisCluster, ps.ix.set("cluster.redis_cluster"))
	validateSentinel(ps, cl.RedisSentinel)
	if form != "" {
		validateCAFile(ps, cl.RedisTLSCAFile)
	}
	for k, set := range map[string]bool{"cluster.redis_username": cl.RedisUsername != "",
		"cluster.redis_password": raw(ps, "cluster.redis_password", cl.RedisPassword) != "", "cluster.redis_tls": cl.RedisTLS,
		"cluster.redis_tls_ca_file": cl.RedisTLSCAFile != ""} {
		if form == "" && set {
			ps.add(k, "needs one of cluster.redis_url, cluster.redis_cluster, cluster.redis_sentinel")
		}
	}
	if form != "" && urlOK && c.MRTR.StateKey == "" {
		ps.add(form, "requires mrtr.state_key: every node must verify the cursors and requestState the others mint")
	}
	if p := cl.KeyPrefix; !keyPrefixRE.MatchString(p) {
		ps.add("cluster.key_prefix", fmt.Sprintf("invalid prefix %q: want 1 to 64 of A-Z a-z 0-9 _ . : { } -", p))
	}
	if u := cl.AdvertiseURL; u != "" && !isHTTPURL(u) {
		ps.add("cluster.advertise_url", fmt.Sprintf("invalid URL %q: want an absolute http or https URL", u))
	} else if _, err := AdvertiseFromListen(c.Listen); u == "" && form != "" && err != nil {
		ps.add("cluster.advertise_url", fmt.Sprintf("required with %s: listen %q does not say how other nodes reach this one", form, c.Listen))
	}
}

// redisForm returns the key of the Redis form set ("" if none) and reports
// every further one at its own line, naming the first.
func redisForm(ps *problems, cl *Cluster) string {
	set := []bool{cl.RedisURL != "", ps.ix.set("cluster.redis_cluster") || len(cl.RedisCluster) > 0, cl.RedisSentinel != nil}
	first := ""
	for i, k := range redisForms {
		switch {
		case !set[i]:
		case first == "":
			first = k
		default:
			ps.add(k, fmt.Sprintf("exactly one of cluster.redis_url, cluster.redis_cluster and cluster.redis_sentinel may be set; %s is set too (line %d)", first, ps.ix.line(first)))
		}
	}
	return first
}

// validateRedisURL reports whether u is empty or a redis:// or rediss://
// URL that go-redis parses (as vmcp serve does: a port, database number or
// option it refuses is reported here, without the URL, whose user info may
// hold the password).
func validateRedisURL(ps *problems, u string) bool {
	if u == "" {
		return true
	}
	if !strings.HasPrefix(u, "redis://") && !strings.HasPrefix(u, "rediss://") {
		ps.add("cluster.redis_url", "must start with redis:// or rediss://")
		return false
	}
	if _, err := redis.ParseURL(u); err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s: %w", ue.Op, ue.Err)
		}
		ps.add("cluster.redis_url", err.Error())
		return false
	}
	return true
}

// validateHostPorts checks a list of host:port addresses under key; set
// says the list was written (then it must not be empty).
func validateHostPorts(ps *problems, key string, addrs []string, set bool) {
	if set && len(addrs) == 0 {
		ps.add(key, "needs at least one host:port")
	}
	for i, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			ps.add(joinIndex(key, i), fmt.Sprintf("want HOST:PORT, got %q", a))
		}
	}
}

// validateCAFile checks that a named CA file holds at least one PEM
// certificate (the file is read at start, so a mistake fails validate).
func validateCAFile(ps *problems, path string) {
	if path == "" {
		return
	}
	if _, err := LoadCAPool(path); err != nil {
		ps.add("cluster.redis_tls_ca_file", err.Error())
	}
}

// LoadCAPool reads a PEM file of CA certificates into a pool; an error
// names the file and what is wrong with it.
func LoadCAPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// validateSentinel checks a Sentinel form: its primary's name and sentinels.
func validateSentinel(ps *problems, s *RedisSentinel) {
	if s == nil {
		return
	}
	if s.Master == "" {
		ps.add("cluster.redis_sentinel.master", "required: the primary's name in the sentinels' configuration (sentinel monitor NAME ...)")
	}
	validateHostPorts(ps, "cluster.redis_sentinel.addrs", s.Addrs, true)
}
