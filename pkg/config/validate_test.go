package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// problemsOf parses src as test.yaml and returns its problems (failing the
// test if it parses cleanly or fails some other way).
func problemsOf(t *testing.T, src string) []Problem {
	t.Helper()
	c, err := Parse([]byte(src), "test.yaml")
	require.Error(t, err)
	require.Nil(t, c)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "test.yaml", ve.File)
	return ve.Problems
}

const okBackend = `backends:
  - name: a
    url: http://127.0.0.1:9001/mcp
`

func TestValidationRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		key  string
		line int
		msg  string // substring
	}{
		// structure
		{"unknown top-level key", okBackend + "lisen: x\n", "lisen", 4, `unknown key "lisen"`},
		{"unknown nested key", "backends:\n  - name: a\n    url: http://h/\n    timout: 5s\n", "backends[0].timout", 4, `unknown key "timout"`},
		{"unknown override key", okBackend + "aggregation:\n  overrides:\n    a:\n      tools:\n        t: {name: y, nam: x}\n", "aggregation.overrides.a.tools.t.nam", 8, `unknown key "nam"`},
		{"duplicate key", "backends:\n  - name: a\n    name: b\n    url: http://h/\n", "backends[0].name", 3, `duplicate key "name" (first at line 2)`},
		{"wrong kind", okBackend + "pagination: 5\n", "pagination", 4, "want a mapping"},
		{"not an integer", okBackend + "sessions:\n  max: lots\n", "sessions.max", 5, `want an integer, got "lots"`},
		{"bad duration", "backends:\n  - name: a\n    url: http://h/\n    timeout: 30\n", "backends[0].timeout", 4, `invalid duration "30"`},
		{"list wanted", "backends:\n  - name: a\n    command: x\n    args: --flag\n", "backends[0].args", 4, "want a list"},
		{"string wanted", "backends:\n  - name: [a]\n    url: http://h/\n", "backends[0].name", 2, "want a string, got a list"},
		{"duplicate header", "backends:\n  - name: a\n    url: http://h/\n    headers:\n      X: 1\n      X: 2\n", "backends[0].headers.X", 6, `duplicate key "X" (first at line 5)`},
		{"bad merge", "backends:\n  - <<: 5\n    name: a\n    url: http://h/\n", `backends[0]["<<"]`, 2, "merge (<<) needs a mapping"},
		{"unknown anchor", okBackend + "name: *nope\n", "", 0, "unknown anchor"},
		{"top level not a mapping", "- a\n- b\n", "", 1, "want a mapping"},
		{"syntax error", "name: x\nlisten: @x\n", "", 2, "cannot start any token"},
		{"two documents", okBackend + "---\nname: x\n", "", 4, "one YAML document"},

		// backends
		{"no backends key", "name: x\n", "backends", 1, "at least one backend is required"},
		{"empty backends", "name: x\nbackends: []\n", "backends", 2, "at least one backend is required"},
		{"empty file", "", "backends", 1, "at least one backend is required"},
		{"name missing", "backends:\n  - url: http://h/\n", "backends[0].name", 2, "required"},
		{"bad name", "backends:\n  - name: Alpha\n    url: http://h/\n", "backends[0].name", 2, `invalid backend name "Alpha"`},
		{"name with leading dash", "backends:\n  - name: -a\n    url: http://h/\n", "backends[0].name", 2, "invalid backend name"},
		{"duplicate name", okBackend + "  - name: a\n    command: x\n", "backends[1].name", 4, `duplicate backend name "a"`},
		{"neither url nor command", "backends:\n  - name: a\n    timeout: 5s\n", "backends[0]", 2, "backend needs url or command"},
		{"both url and command", "backends:\n  - name: a\n    url: http://h/\n    command: x\n", "backends[0].command", 4, "both url and command"},
		{"unknown transport", "backends:\n  - name: a\n    url: http://h/\n    transport: grpc\n", "backends[0].transport", 4, `unknown transport "grpc"`},
		{"stdio with url", "backends:\n  - name: a\n    url: http://h/\n    transport: stdio\n", "backends[0].transport", 4, "stdio requires command"},
		{"sse with command", "backends:\n  - name: a\n    command: x\n    transport: sse\n", "backends[0].transport", 4, "sse requires url"},
		{"streamable-http with command", "backends:\n  - name: a\n    command: x\n    transport: streamable-http\n", "backends[0].transport", 4, "streamable-http requires url"},
		{"relative url", "backends:\n  - name: a\n    url: /mcp\n", "backends[0].url", 3, `invalid URL "/mcp"`},
		{"non-http url", "backends:\n  - name: a\n    url: ftp://h/x\n", "backends[0].url", 3, "http or https"},
		{"zero timeout", "backends:\n  - name: a\n    url: http://h/\n    timeout: 0s\n", "backends[0].timeout", 4, "positive duration"},
		{"negative timeout", "backends:\n  - name: a\n    url: http://h/\n    timeout: -1s\n", "backends[0].timeout", 4, "positive duration"},
		{"negative max_processes", "backends:\n  - name: a\n    command: x\n    max_processes: -1\n", "backends[0].max_processes", 4, "at least 0"},
		{"isolation on http", "backends:\n  - name: a\n    url: http://h/\n    isolation: shared\n", "backends[0].isolation", 4, "only to stdio"},
		{"unknown isolation", "backends:\n  - name: a\n    command: x\n    isolation: none\n", "backends[0].isolation", 4, `unknown isolation "none"`},
		{"max_processes on http", "backends:\n  - name: a\n    url: http://h/\n    max_processes: 2\n", "backends[0].max_processes", 4, "only to stdio"},

		// aggregation
		{"unknown strategy", okBackend + "aggregation:\n  conflict_resolution: random\n", "aggregation.conflict_resolution", 5, `unknown strategy "random"`},
		{"prefix format without name", okBackend + "aggregation:\n  prefix_format: \"{backend}-\"\n", "aggregation.prefix_format", 5, "{backend} and {name}"},
		{"prefix format without backend", okBackend + "aggregation:\n  prefix_format: \"x_{name}\"\n", "aggregation.prefix_format", 5, "{backend} and {name}"},
		{"unknown priority backend", okBackend + "aggregation:\n  priority:\n    - a\n    - zz\n", "aggregation.priority[1]", 7, `unknown backend "zz"`},
		{"duplicate priority", okBackend + "aggregation:\n  priority: [a, a]\n", "aggregation.priority[1]", 5, `duplicate backend "a"`},
		{"unknown override backend", okBackend + "aggregation:\n  overrides:\n    zz:\n      tools: {t: {name: x}}\n", "aggregation.overrides.zz", 6, `unknown backend "zz"`},
		{"empty tool override", okBackend + "aggregation:\n  overrides:\n    a:\n      tools:\n        t: {name: \"\"}\n", "aggregation.overrides.a.tools.t", 8, "needs a name or a description"},
		{"null prompt override", okBackend + "aggregation:\n  overrides:\n    a:\n      prompts:\n        \"p.q\":\n", "aggregation.overrides.a.prompts[\"p.q\"]", 8, "needs a name or a description"},

		// limits
		{"page size zero", okBackend + "pagination:\n  page_size: 0\n", "pagination.page_size", 5, "between 1 and 10000"},
		{"page size too big", okBackend + "pagination:\n  page_size: 10001\n", "pagination.page_size", 5, "between 1 and 10000"},
		{"sessions max zero", okBackend + "sessions:\n  max: 0\n", "sessions.max", 5, "at least 1"},
		{"idle timeout zero", okBackend + "sessions:\n  idle_timeout: 0s\n", "sessions.idle_timeout", 5, "positive duration"},
		{"body too small", okBackend + "http:\n  max_body_bytes: 1023\n", "http.max_body_bytes", 5, "at least 1024"},
		{"shutdown timeout negative", okBackend + "http:\n  shutdown_timeout: -5s\n", "http.shutdown_timeout", 5, "positive duration"},
		{"read body timeout zero", okBackend + "http:\n  read_body_timeout: 0s\n", "http.read_body_timeout", 5, "positive duration"},
		{"read header timeout negative", okBackend + "http:\n  read_header_timeout: -1s\n", "http.read_header_timeout", 5, "positive duration"},
		{"http idle timeout zero", okBackend + "http:\n  idle_timeout: 0s\n", "http.idle_timeout", 5, "positive duration"},
		{"origin with path", okBackend + "http:\n  allowed_origins:\n    - https://a.example\n    - https://b.example/app\n", "http.allowed_origins[1]", 7, `invalid origin "https://b.example/app"`},
		{"origin without scheme", okBackend + "http:\n  allowed_origins: [a.example]\n", "http.allowed_origins[0]", 5, "want scheme://host[:port]"},
		{"host with scheme", okBackend + "http:\n  allowed_hosts: [\"https://vmcp.example\"]\n", "http.allowed_hosts[0]", 5, `invalid host "https://vmcp.example"`},
		{"host wildcard", okBackend + "http:\n  allowed_hosts: [\"*\"]\n", "http.allowed_hosts[0]", 5, "invalid host"},
		{"metrics listen without port", okBackend + "http:\n  metrics_listen: localhost\n", "http.metrics_listen", 5, "HOST:PORT"},
		{"metrics listen equals listen", okBackend + "listen: 127.0.0.1:9000\nhttp:\n  metrics_listen: 127.0.0.1:9000\n", "http.metrics_listen", 6, "must differ from listen"},
		{"park timeout zero", okBackend + "mrtr:\n  park_timeout: 0s\n", "mrtr.park_timeout", 5, "positive duration"},
		{"state key short", okBackend + "mrtr:\n  state_key: abc\n", "mrtr.state_key", 5, "at least 32 bytes"},
		{"redis url scheme", okBackend + "cluster:\n  redis_url: http://r:6379\n", "cluster.redis_url", 5, "redis:// or rediss://"},
		{"advertise url", okBackend + "cluster:\n  advertise_url: node1:8080\n", "cluster.advertise_url", 5, "http or https"},
		{"max events zero", okBackend + "cluster:\n  max_events_per_session: 0\n", "cluster.max_events_per_session", 5, "at least 1"},
		{"key prefix chars", okBackend + "cluster:\n  key_prefix: \"a b\"\n", "cluster.key_prefix", 5, "invalid prefix"},
		{"cluster without state key", okBackend + "cluster:\n  redis_url: redis://r:6379\n", "cluster.redis_url", 5, "requires mrtr.state_key"},
		{"cluster on a wildcard listen without advertise url", okBackend + "listen: 0.0.0.0:8080\ncluster:\n  redis_url: redis://r:6379\nmrtr:\n  state_key: 0123456789abcdef0123456789abcdef\n", "cluster.advertise_url", 5, "does not say how other nodes reach this one"},
		{"listen without port", okBackend + "listen: localhost\n", "listen", 4, "HOST:PORT"},
		{"path without slash", okBackend + "path: mcp\n", "path", 4, `must start with "/"`},
		{"per principal zero", okBackend + "sessions:\n  max_per_principal: 0\n", "sessions.max_per_principal", 5, "at least 1"},
		{"per principal above max", okBackend + "sessions:\n  max: 10\n  max_per_principal: 11\n", "sessions.max_per_principal", 6, "must not exceed sessions.max (10)"},

		// auth
		{"auth empty", okBackend + "auth:\n", "auth", 4, "remove the key"},
		{"auth no issuer", okBackend + "auth:\n  audience: https://v/mcp\n", "auth.issuer", 4, "required"},
		{"auth no audience", okBackend + "auth:\n  issuer: https://idp\n", "auth.audience", 4, "required"},
		{"auth http issuer", okBackend + authOK("issuer: http://idp.example.com"), "auth.issuer", 5, "must use https"},
		{"auth relative audience", okBackend + authOK("audience: /mcp"), "auth.audience", 6, "absolute https URL"},
		{"auth audience fragment", okBackend + authOK("audience: https://v/mcp#x"), "auth.audience", 6, "fragment"},
		{"auth jwks query", okBackend + authOK("jwks_url: https://idp/keys?x=1") + "  jwks_url: https://idp/keys?x=1\n", "auth.jwks_url", 7, "query"},
		{"auth scope space", okBackend + authOK("") + "  required_scopes: [\"a b\"]\n", "auth.required_scopes[0]", 7, "invalid scope"},
		{"auth scope duplicate", okBackend + authOK("") + "  required_scopes: [a, a]\n", "auth.required_scopes[1]", 7, "duplicate scope"},
		{"auth unknown key", okBackend + authOK("") + "  audiences: [x]\n", "auth.audiences", 7, `unknown key "audiences"`},
		{"auth leeway zero", okBackend + authOK("") + "  leeway: 0s\n", "auth.leeway", 7, "positive duration"},
		{"auth not a mapping", okBackend + "auth: yes\n", "auth", 4, "want a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, tt.src)
			require.Len(t, ps, 1, "problems: %v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Equal(t, tt.line, ps[0].Line)
			assert.Contains(t, ps[0].Msg, tt.msg)
		})
	}
}

// authOK is a valid auth section; override replaces its issuer or
// audience line (by key) when non-empty and not a jwks_url line.
func authOK(override string) string {
	issuer, audience := "issuer: https://idp.example.com", "audience: https://vmcp.example.com/mcp"
	switch {
	case strings.HasPrefix(override, "issuer:"):
		issuer = override
	case strings.HasPrefix(override, "audience:"):
		audience = override
	}
	return "auth:\n  " + issuer + "\n  " + audience + "\n"
}

func TestAuthSectionDefaultsAndAbsence(t *testing.T) {
	c, err := Parse([]byte(okBackend+authOK("")+"  required_scopes: [mcp:tools]\n"), "ok.yaml")
	require.NoError(t, err)
	require.NotNil(t, c.Auth)
	assert.Equal(t, "vmcp", c.Auth.ResourceName, "resource_name defaults to name")
	assert.Equal(t, Duration(30*time.Second), c.Auth.Leeway)
	assert.Equal(t, Duration(time.Minute), c.Auth.JWKSRefreshInterval)
	assert.Equal(t, []string{"mcp:tools"}, c.Auth.RequiredScopes)
	assert.Equal(t, 1000, c.Sessions.MaxPerPrincipal, "a tenth of sessions.max")

	c, err = Parse([]byte(okBackend+"auth:\n  issuer: http://127.0.0.1:5556/dex\n  audience: http://localhost:8080/mcp\n"), "ok.yaml")
	require.NoError(t, err, "http is allowed on loopback hosts")
	require.NotNil(t, c.Auth)

	c, err = Parse([]byte(okBackend+"sessions:\n  max: 5\n"), "ok.yaml")
	require.NoError(t, err)
	assert.Nil(t, c.Auth, "no auth key: no authentication")
	assert.Equal(t, 1, c.Sessions.MaxPerPrincipal, "at least 1")
}

func TestValidConfigs(t *testing.T) {
	tests := map[string]string{
		"minimal url":      okBackend,
		"minimal command":  "backends:\n  - name: a\n    command: srv\n",
		"sse":              "backends:\n  - name: a\n    url: https://h/sse\n    transport: sse\n",
		"priority no list": okBackend + "aggregation:\n  conflict_resolution: priority\n",
		"manual":           okBackend + "aggregation:\n  conflict_resolution: manual\n  overrides:\n    a:\n      prompts: {p: {description: d}}\n",
		"null sections":    okBackend + "aggregation:\nsessions:\npagination:\n  page_size:\n",
		"rediss cluster":   okBackend + "cluster:\n  redis_url: rediss://u:p@r:6380/0\n  advertise_url: http://10.0.0.1:8080\n  key_prefix: \"{prod}:vmcp:\"\nmrtr:\n  state_key: 0123456789abcdef0123456789abcdef\n",
		"comment only top": "# vmcp\n\n" + okBackend,
		"http edge":        okBackend + "http:\n  allowed_origins: [\"https://app.example\", \"http://127.0.0.1:3000\"]\n  allowed_hosts: [vmcp.example.com, \"vmcp.example.com:8443\", \"[::1]:8080\", 10.0.0.1]\n  read_body_timeout: 5s\n  idle_timeout: 1m\n  read_header_timeout: 2s\n  metrics_listen: 127.0.0.1:9090\n",
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse([]byte(src), "ok.yaml")
			require.NoError(t, err)
			require.NotEmpty(t, c.Backends)
		})
	}
}

func TestMergeKeys(t *testing.T) {
	src := `backends:
  - &base
    name: a
    url: http://h/mcp
    headers: {X: y}
  - <<: *base
    name: b
    timeout: soon
`
	ps := problemsOf(t, src)
	require.Len(t, ps, 1, "%v", ps)
	assert.Equal(t, Problem{Line: 8, Key: "backends[1].timeout", File: "test.yaml",
		Msg: `invalid duration "soon": want e.g. "30s" or "5m"`}, ps[0])

	c, err := Parse([]byte(strings.Replace(src, "    timeout: soon\n", "", 1)), "m.yaml")
	require.NoError(t, err)
	assert.Equal(t, "b", c.Backends[1].Name)
	assert.Equal(t, "http://h/mcp", c.Backends[1].URL)
	assert.Equal(t, map[string]string{"X": "y"}, c.Backends[1].Headers)
}

func TestAllProblemsReported(t *testing.T) {
	src := `listen: 127.0.0.1:8080
colour: blue
backends:
  - name: alpha
    url: http://127.0.0.1:9001/mcp
    tiemout: 5s
  - name: alpha
    command: srv
  - name: Bad
  - name: gamma
    url: http://h/
    timeout: later
aggregation:
  conflict_resolution: priority
  priority: [alpha, delta]
  overrides:
    omega: {tools: {t: {name: x}}}
pagination:
  page_size: 0
sessions:
  max: -1
extra: {a: 1}
`
	ps := problemsOf(t, src)
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	assert.Equal(t, []string{
		`test.yaml:2: colour: unknown key "colour"`,
		`test.yaml:6: backends[0].tiemout: unknown key "tiemout"`,
		`test.yaml:7: backends[1].name: duplicate backend name "alpha"`,
		`test.yaml:9: backends[2].name: invalid backend name "Bad": want lower-case letters, digits, _ and -, starting with a letter or digit`,
		`test.yaml:9: backends[2]: backend needs url or command`,
		`test.yaml:12: backends[3].timeout: invalid duration "later": want e.g. "30s" or "5m"`,
		`test.yaml:15: aggregation.priority[1]: unknown backend "delta"`,
		`test.yaml:17: aggregation.overrides.omega: unknown backend "omega"`,
		`test.yaml:19: pagination.page_size: must be between 1 and 10000, got 0`,
		`test.yaml:21: sessions.max: must be at least 1, got -1`,
		`test.yaml:22: extra: unknown key "extra"`,
	}, got)

	// the warning found in the same pass is listed, and labelled, too
	t.Setenv("PATH", t.TempDir())
	var ve *ValidationError
	_, err := Parse([]byte(src), "test.yaml")
	require.ErrorAs(t, err, &ve)
	withWarning := slices.Insert(got, 3, `test.yaml:8: backends[1].command: warning: command "srv" not found on PATH`)
	assert.Equal(t, strings.Join(withWarning, "\n"), err.Error())
}

func TestAliasBombIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(okBackend + "aggregation:\n  overrides:\n    a: &o\n      tools:\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, "        t%d: {name: x}\n", i)
	}
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, "    b%d: *o\n", i)
	}
	ps := problemsOf(t, b.String())
	assert.Contains(t, ps[0].Msg, "too large")
}

// A forward_headers name the backend transport sets itself (Mcp-Session-Id
// would hand the client's vmcp session id to the backend) was accepted and
// overwrote vmcp's own header on every backend request.
func TestForwardHeadersNamingTransportHeadersAreRefusedWithTheirLine(t *testing.T) {
	ps := problemsOf(t, okBackend+"    forward_headers: [X-Tenant, Mcp-Session-Id, \"bad name\", Host]\n")
	require.Len(t, ps, 3)
	assert.Equal(t, "backends[0].forward_headers[1]", ps[0].Key)
	assert.Equal(t, 4, ps[0].Line)
	assert.Contains(t, ps[0].Msg, "Mcp-Session-Id is set by vmcp's transport")
	assert.Contains(t, ps[1].Msg, `invalid header name "bad name"`)
	assert.Equal(t, "backends[0].forward_headers[3]", ps[2].Key)
}
