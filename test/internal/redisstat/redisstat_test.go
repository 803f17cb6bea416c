package redisstat

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCountsCommandsButINFO(t *testing.T) {
	s := Parse("# Commandstats\r\ncmdstat_get:calls=3,usec=4,usec_per_call=1.33,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=9,usec=1\r\ncmdstat_evalsha:calls=2,usec=1\r\ncmdstat_client|setinfo:calls=1,usec=1\r\n" +
		"# Memory\r\nused_memory:123456\r\n# Keyspace\r\ndb0:keys=7,expires=5,avg_ttl=0\r\n")
	require.Equal(t, map[string]int64{"get": 3, "evalsha": 2, "client|setinfo": 1}, s.Calls)
	require.EqualValues(t, 6, s.Commands())
	require.EqualValues(t, 2, s.Scripts())
	require.EqualValues(t, 123456, s.UsedMemory)
	require.EqualValues(t, 7, s.Keys)
	d := s.Sub(Parse("cmdstat_get:calls=1\r\nused_memory:100000\r\ndb0:keys=2\r\n"))
	require.Equal(t, map[string]int64{"get": 2, "evalsha": 2, "client|setinfo": 1}, d.Calls)
	require.EqualValues(t, 23456, d.UsedMemory)
	require.Equal(t, "evalsha 1.00 get 1.00 client|setinfo 0.50", d.Breakdown(2))
}

// A pipeline of two commands in RESP arrays, an inline PING and a script
// that runs two commands are four requests through the Counter, and six
// executed commands in Redis.
func TestCounterCountsRequestsNotWhatScriptsExecute(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (make redis installs it)")
	}
	srv, err := Start()
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	c, err := NewCounter(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	stats := srv.Client()
	t.Cleanup(func() { _ = stats.Close() })
	ctx := context.Background()
	s0, err := Read(ctx, stats)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", c.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	script := "redis.call('set', KEYS[1], 'x'); return redis.call('get', KEYS[1])"
	_, err = fmt.Fprintf(conn, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n*4\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n1\r\n$3\r\nbig\r\n", len(script), script)
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	var replies []string
	for len(replies) < 5 { // +OK, $1, v, +PONG, $1 (x follows)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		replies = append(replies, strings.TrimSpace(line))
	}
	require.Equal(t, []string{"+OK", "$1", "v", "+PONG", "$1"}, replies)
	s1, err := Read(ctx, stats)
	require.NoError(t, err)
	require.EqualValues(t, 4, c.Requests())
	require.Equal(t, map[string]int64{"set": 2, "get": 2, "ping": 1, "eval": 1}, s1.Sub(s0).Calls)
}
