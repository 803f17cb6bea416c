package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const exampleYAML = `listen: 127.0.0.1:8080
path: /mcp
name: vmcp
backends:
  - name: alpha
    url: http://127.0.0.1:9001/mcp
    transport: streamable-http
    headers: {X-Api-Key: "${ALPHA_KEY}"}
    timeout: 30s
  - name: beta
    command: /usr/local/bin/some-mcp-server
    args: ["--flag"]
    env: {KEY: value}
aggregation:
  conflict_resolution: prefix
  prefix_format: "{backend}_{name}"
  priority: [alpha, beta]
  overrides:
    alpha: {tools: {search: {name: alpha_search, description: "..."}}}
pagination:
  page_size: 1000
`

func TestParseExample(t *testing.T) {
	t.Setenv("ALPHA_KEY", "s3cret")
	clearOTelEnv(t)
	one := 1.0
	got, err := Parse([]byte(exampleYAML), "example.yaml")
	require.NoError(t, err)
	want := &Config{
		Listen: "127.0.0.1:8080",
		Path:   "/mcp",
		Name:   "vmcp",
		Backends: []Backend{{
			Name:      "alpha",
			URL:       "http://127.0.0.1:9001/mcp",
			Transport: TransportStreamableHTTP,
			Headers:   map[string]string{"X-Api-Key": "s3cret"},
			Timeout:   Duration(30 * time.Second),
		}, {
			Name:      "beta",
			Command:   "/usr/local/bin/some-mcp-server",
			Transport: TransportStdio,
			Args:      []string{"--flag"},
			Env:       map[string]string{"KEY": "value"},
			Timeout:   Duration(30 * time.Second),
			Isolation: IsolationSession,
		}},
		Aggregation: Aggregation{
			ConflictResolution: StrategyPrefix,
			PrefixFormat:       "{backend}_{name}",
			Priority:           []string{"alpha", "beta"},
			Overrides: map[string]BackendOverrides{"alpha": {
				Tools: map[string]Override{"search": {Name: "alpha_search", Description: "..."}},
			}},
		},
		Pagination: Pagination{PageSize: 1000},
		Sessions:   Sessions{IdleTimeout: Duration(30 * time.Minute), Max: 10000, MaxPerPrincipal: 1000},
		HTTP: HTTP{MaxBodyBytes: 4 << 20, ShutdownTimeout: Duration(10 * time.Second),
			ReadHeaderTimeout: Duration(10 * time.Second), ReadBodyTimeout: Duration(30 * time.Second), IdleTimeout: Duration(2 * time.Minute)},
		MRTR:       MRTR{ParkTimeout: Duration(5 * time.Minute), MaxParked: 1000, MaxParkedPerPrincipal: 100},
		Cluster:    Cluster{MaxEventsPerSession: 1000, KeyPrefix: "vmcp:"},
		Telemetry:  Telemetry{Tracing: Tracing{Protocol: ProtocolHTTPProtobuf, SampleRatio: &one, ServiceName: "vmcp"}},
		ToolSearch: ToolSearch{List: ToolListSearchOnly},
		Security:   Security{ToolChanges: ToolChangesWarn, PinRetention: Duration(DefaultPinRetention)},
	}
	assert.Equal(t, want, got)
}

func TestRoundTrip(t *testing.T) {
	t.Setenv("ALPHA_KEY", "s3cret")
	first, err := Parse([]byte(exampleYAML), "example.yaml")
	require.NoError(t, err)
	out, err := yaml.Marshal(first)
	require.NoError(t, err)
	assert.Contains(t, string(out), "idle_timeout: 30m0s")

	second, err := Parse(out, "marshalled.yaml")
	require.NoError(t, err, "marshalled config:\n%s", out)
	out2, err := yaml.Marshal(second)
	require.NoError(t, err)
	assert.Equal(t, string(out), string(out2))
}

func TestApplyDefaultsKeepsSetValues(t *testing.T) {
	c := &Config{
		Listen:   ":9000",
		Backends: []Backend{{Name: "a", URL: "http://x", Transport: TransportSSE, Timeout: Duration(time.Second)}, {Name: "b", Command: "srv"}},
		Sessions: Sessions{Max: 5},
	}
	c.ApplyDefaults()
	assert.Equal(t, ":9000", c.Listen)
	assert.Equal(t, "/mcp", c.Path)
	assert.Equal(t, TransportSSE, c.Backends[0].Transport)
	assert.Equal(t, time.Second, c.Backends[0].Timeout.D())
	assert.Equal(t, TransportStdio, c.Backends[1].Transport)
	assert.Equal(t, 30*time.Second, c.Backends[1].Timeout.D())
	assert.Equal(t, 5, c.Sessions.Max)
	assert.Equal(t, 1000, c.Pagination.PageSize)
	assert.Equal(t, int64(4<<20), c.HTTP.MaxBodyBytes)
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("HOST", "example.com")
	t.Setenv("TOKEN", "tok")
	t.Setenv("KEY32", strings.Repeat("k", 32))
	src := `backends:
  - name: a
    url: https://${HOST}/mcp?x=$HOST
    headers: {Authorization: "Bearer ${TOKEN}", "${TOKEN}": plain}
  - name: b
    command: ${HOST}
    args: ["--host=${HOST}", "${UNSET_VAR_FOR_TEST}", "$$HOST", "${HOST"]
    env: {A: "${TOKEN}${TOKEN}"}
mrtr:
  state_key: ${KEY32}
`
	c, err := Parse([]byte(src), "env.yaml")
	require.NoError(t, err)
	assert.Equal(t, "https://example.com/mcp?x=$HOST", c.Backends[0].URL)
	assert.Equal(t, map[string]string{"Authorization": "Bearer tok", "${TOKEN}": "plain"}, c.Backends[0].Headers)
	assert.Equal(t, "${HOST}", c.Backends[1].Command, "command is not expanded")
	assert.Equal(t, []string{"--host=example.com", "", "$$HOST", "${HOST"}, c.Backends[1].Args)
	assert.Equal(t, map[string]string{"A": "toktok"}, c.Backends[1].Env)
	assert.Equal(t, strings.Repeat("k", 32), c.MRTR.StateKey)
}

func TestExpandedValuesAreValidated(t *testing.T) {
	t.Setenv("SHORT_KEY", "short")
	t.Setenv("BAD_URL", "ftp://host/x")
	src := `backends:
  - name: a
    url: ${BAD_URL}
mrtr:
  state_key: ${SHORT_KEY}
`
	ps := problemsOf(t, src)
	require.Len(t, ps, 2)
	assert.Equal(t, Problem{Line: 3, Key: "backends[0].url", File: "test.yaml",
		Msg: `invalid URL "${BAD_URL}": want an absolute http or https URL`}, ps[0])
	assert.Equal(t, "mrtr.state_key", ps[1].Key)
	assert.Equal(t, 5, ps[1].Line)
	assert.NotContains(t, ps[1].Msg, "short", "the secret is not echoed")
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(exampleYAML), 0o600))
	c, err := Load(good)
	require.NoError(t, err)
	assert.Len(t, c.Backends, 2)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("backends: []\n"), 0o600))
	_, err = Load(bad)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, bad, ve.File)
	assert.Equal(t, bad+":1: backends: at least one backend is required", err.Error())
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "got %v", err)
}

func TestDuration(t *testing.T) {
	var v struct {
		D Duration `yaml:"d"`
	}
	require.NoError(t, yaml.Unmarshal([]byte("d: 1m30s"), &v))
	assert.Equal(t, 90*time.Second, v.D.D())
	assert.Equal(t, "1m30s", v.D.String())
	out, err := yaml.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, "d: 1m30s\n", string(out))

	for _, bad := range []string{"d: 30", "d: soon", "d: [1s]"} {
		err := yaml.Unmarshal([]byte("x: 1\n"+bad), &v)
		var te *yaml.TypeError
		require.ErrorAs(t, err, &te, bad)
		assert.Contains(t, te.Errors[0], "line 2:", bad)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Line: 12, Key: "backends[1].name", Msg: `duplicate backend name "alpha"`, File: "demo.yaml"},
			`demo.yaml:12: backends[1].name: duplicate backend name "alpha"`},
		{Problem{Line: 3, Msg: "bad", File: "f.yaml"}, "f.yaml:3: bad"},
		{Problem{Key: "k", Msg: "bad", File: "f.yaml"}, "f.yaml: k: bad"},
		{Problem{Line: 3, Key: "k", Msg: "bad"}, "line 3: k: bad"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.p.String())
	}
	err := &ValidationError{File: "f", Problems: []Problem{tests[0].p, tests[1].p}}
	assert.Equal(t, tests[0].want+"\n"+tests[1].want, err.Error())
}
