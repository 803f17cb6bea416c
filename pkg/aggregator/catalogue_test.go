package aggregator

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/config"
)

func tools(names ...string) []*mcp.Tool {
	var out []*mcp.Tool
	for _, n := range names {
		out = append(out, &mcp.Tool{Name: n, Description: "orig " + n})
	}
	return out
}

func prompts(names ...string) []*mcp.Prompt {
	var out []*mcp.Prompt
	for _, n := range names {
		out = append(out, &mcp.Prompt{Name: n, Description: "orig " + n})
	}
	return out
}

func toolNames(c *Catalogue) []string {
	var out []string
	for _, t := range c.Tools {
		out = append(out, t.Name)
	}
	return out
}

func promptNames(c *Catalogue) []string {
	var out []string
	for _, p := range c.Prompts {
		out = append(out, p.Name)
	}
	return out
}

func TestBuildNames(t *testing.T) {
	ab := []string{"a", "b"}
	tests := []struct {
		name    string
		policy  Policy
		inv     []Inventory
		tools   []string
		prompts []string
		routes  map[string]Route // advertised tool -> route
		descs   map[string]string
		err     error
		errHas  []string
	}{
		{
			name:   "prefix renames every name",
			policy: Policy{Order: ab},
			inv: []Inventory{
				{Backend: "a", Tools: tools("search", "x"), Prompts: prompts("p")},
				{Backend: "b", Tools: tools("search")},
			},
			tools:   []string{"a_search", "a_x", "b_search"},
			prompts: []string{"a_p"},
			routes: map[string]Route{
				"a_search": {"a", "search"}, "b_search": {"b", "search"}, "a_x": {"a", "x"},
			},
		},
		{
			name:   "custom prefix format",
			policy: Policy{Strategy: config.StrategyPrefix, PrefixFormat: "{backend}.{name}", Order: ab},
			inv:    []Inventory{{Backend: "a", Tools: tools("t")}},
			tools:  []string{"a.t"},
		},
		{
			name:   "priority: first bare, others prefixed, non-colliding bare",
			policy: Policy{Strategy: config.StrategyPriority, Order: []string{"a", "b", "c"}, Priority: []string{"b"}},
			inv: []Inventory{
				{Backend: "a", Tools: tools("search", "only_a"), Prompts: prompts("p")},
				{Backend: "b", Tools: tools("search")},
				{Backend: "c", Tools: tools("search"), Prompts: prompts("p")},
			},
			tools:   []string{"a_search", "c_search", "only_a", "search"},
			prompts: []string{"c_p", "p"},
			routes: map[string]Route{
				"search": {"b", "search"}, "a_search": {"a", "search"},
				"c_search": {"c", "search"}, "only_a": {"a", "only_a"},
			},
		},
		{
			name: "priority: override claims bare name over higher priority",
			policy: Policy{Strategy: config.StrategyPriority, Order: ab,
				Overrides: map[string]config.BackendOverrides{
					"b": {Tools: map[string]config.Override{"find": {Name: "search"}}},
				}},
			inv: []Inventory{
				{Backend: "a", Tools: tools("search")},
				{Backend: "b", Tools: tools("find")},
			},
			tools:  []string{"a_search", "search"},
			routes: map[string]Route{"search": {"b", "find"}, "a_search": {"a", "search"}},
		},
		{
			name: "manual: override resolves the collision",
			policy: Policy{Strategy: config.StrategyManual, Order: ab,
				Overrides: map[string]config.BackendOverrides{
					"b": {
						Tools:   map[string]config.Override{"search": {Name: "web_search", Description: "Search the web"}},
						Prompts: map[string]config.Override{"p": {Description: "new desc"}},
					},
				}},
			inv: []Inventory{
				{Backend: "a", Tools: tools("search")},
				{Backend: "b", Tools: tools("search"), Prompts: prompts("p")},
			},
			tools:   []string{"search", "web_search"},
			prompts: []string{"p"},
			routes:  map[string]Route{"search": {"a", "search"}, "web_search": {"b", "search"}},
			descs:   map[string]string{"web_search": "Search the web", "search": "orig search"},
		},
		{
			name:   "manual: unresolved collision names both backends",
			policy: Policy{Strategy: config.StrategyManual, Order: ab},
			inv: []Inventory{
				{Backend: "a", Tools: tools("search")},
				{Backend: "b", Tools: tools("search")},
			},
			err:    ErrUnresolvedConflict,
			errHas: []string{`"search"`, `"a"`, `"b"`},
		},
		{
			name:   "manual: unresolved prompt collision",
			policy: Policy{Strategy: config.StrategyManual, Order: ab},
			inv: []Inventory{
				{Backend: "a", Prompts: prompts("p")},
				{Backend: "b", Prompts: prompts("p")},
			},
			err:    ErrUnresolvedConflict,
			errHas: []string{"prompt", `"p"`, `"a"`, `"b"`},
		},
		{
			name: "overrides take precedence over prefix",
			policy: Policy{Order: ab, Overrides: map[string]config.BackendOverrides{
				"a": {Tools: map[string]config.Override{
					"search": {Name: "find"},
					"x":      {Description: "better x"},
				}},
			}},
			inv: []Inventory{
				{Backend: "a", Tools: tools("search", "x")},
				{Backend: "b", Tools: tools("search")},
			},
			tools:  []string{"a_x", "b_search", "find"},
			routes: map[string]Route{"find": {"a", "search"}, "a_x": {"a", "x"}},
			descs:  map[string]string{"a_x": "better x", "find": "orig search"},
		},
		{
			name:   "post-rename collision is an error",
			policy: Policy{Order: []string{"a", "a_b"}},
			inv: []Inventory{
				{Backend: "a", Tools: tools("b_c", "keep")},
				{Backend: "a_b", Tools: tools("c")},
			},
			err:    ErrNameCollision,
			errHas: []string{`"a_b_c"`, `"a"`, `"a_b"`, `"b_c"`, `"c"`},
			tools:  []string{"a_keep"},
		},
		{
			name:   "priority: prefixed name colliding with bare name is an error",
			policy: Policy{Strategy: config.StrategyPriority, Order: ab},
			inv: []Inventory{
				{Backend: "a", Tools: tools("x", "b_x")},
				{Backend: "b", Tools: tools("x")},
			},
			err:    ErrNameCollision,
			errHas: []string{`"b_x"`},
		},
		{
			name: "override onto an existing name is an error under prefix",
			policy: Policy{Order: ab, Overrides: map[string]config.BackendOverrides{
				"a": {Tools: map[string]config.Override{"x": {Name: "b_y"}}},
			}},
			inv: []Inventory{
				{Backend: "a", Tools: tools("x")},
				{Backend: "b", Tools: tools("y")},
			},
			err: ErrNameCollision,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := Build(tt.policy, tt.inv)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				require.NotNil(t, c, "the rest of the catalogue is built")
				for _, s := range tt.errHas {
					assert.Contains(t, err.Error(), s)
				}
				if tt.tools != nil {
					assert.Equal(t, tt.tools, toolNames(c), "colliding names withheld, the rest kept")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.tools, toolNames(c))
			assert.Equal(t, tt.prompts, promptNames(c))
			for name, want := range tt.routes {
				tool, r, ok := c.Tool(name)
				require.True(t, ok, name)
				assert.Equal(t, want, r, name)
				assert.Equal(t, name, tool.Name)
			}
			for name, want := range tt.descs {
				tool, _, ok := c.Tool(name)
				require.True(t, ok, name)
				assert.Equal(t, want, tool.Description, name)
			}
			_, _, ok := c.Tool("nope")
			assert.False(t, ok)
		})
	}
}

func TestBuildPromptRoute(t *testing.T) {
	c, _, err := Build(Policy{Order: []string{"a"}}, []Inventory{{Backend: "a", Prompts: prompts("greet")}})
	require.NoError(t, err)
	p, r, ok := c.Prompt("a_greet")
	require.True(t, ok)
	assert.Equal(t, "a_greet", p.Name)
	assert.Equal(t, Route{"a", "greet"}, r)
}

func TestResourceConflicts(t *testing.T) {
	inv := []Inventory{
		{Backend: "b", Resources: []*mcp.Resource{{URI: "file:///shared", Name: "b"}, {URI: "file:///b"}},
			Templates: []*mcp.ResourceTemplate{{URITemplate: "db://{table}", Name: "b"}}},
		{Backend: "a", Resources: []*mcp.Resource{{URI: "file:///shared", Name: "a"}},
			Templates: []*mcp.ResourceTemplate{{URITemplate: "db://{table}", Name: "a"}}},
	}
	tests := []struct {
		name   string
		policy Policy
		winner string
		loser  string
	}{
		{"prefix uses Order", Policy{Order: []string{"a", "b"}}, "a", "b"},
		{"prefix uses Order reversed", Policy{Order: []string{"b", "a"}}, "b", "a"},
		{"priority uses Priority", Policy{Strategy: config.StrategyPriority, Order: []string{"a", "b"}, Priority: []string{"b"}}, "b", "a"},
		{"manual uses Order", Policy{Strategy: config.StrategyManual, Order: []string{"a", "b"}}, "a", "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, conflicts, err := Build(tt.policy, inv)
			require.NoError(t, err)
			assert.ElementsMatch(t, []Conflict{
				{KindResources, "file:///shared", tt.winner, tt.loser},
				{KindTemplates, "db://{table}", tt.winner, tt.loser},
			}, conflicts)
			require.Len(t, c.Resources, 2)
			assert.Equal(t, "file:///b", c.Resources[0].URI)
			assert.Equal(t, tt.winner, c.Resources[1].Name)
			r, ok := c.Resource("file:///shared")
			require.True(t, ok)
			assert.Equal(t, Route{tt.winner, "file:///shared"}, r)
			r, ok = c.Template("db://{table}")
			require.True(t, ok)
			assert.Equal(t, Route{tt.winner, "db://{table}"}, r)
			r, ok = c.Resource("db://users")
			require.True(t, ok)
			assert.Equal(t, Route{tt.winner, "db://users"}, r)
		})
	}
}

func TestTemplateMatching(t *testing.T) {
	inv := []Inventory{
		{Backend: "files", Templates: []*mcp.ResourceTemplate{{URITemplate: "file:///x/{name}"}}},
		{Backend: "other", Templates: []*mcp.ResourceTemplate{{URITemplate: "file:///y/{name}"}},
			Resources: []*mcp.Resource{{URI: "file:///x/special"}}},
		{Backend: "bad", Templates: []*mcp.ResourceTemplate{{URITemplate: "file:///{unclosed"}}},
	}
	c, conflicts, err := Build(Policy{Order: []string{"files", "other", "bad"}}, inv)
	require.NoError(t, err)
	assert.Equal(t, []Conflict{{KindTemplates, "file:///{unclosed", "", "bad"}}, conflicts)
	tests := []struct {
		uri     string
		backend string
		ok      bool
	}{
		{"file:///x/readme", "files", true},
		{"file:///y/readme", "other", true},
		{"file:///x/special", "other", true}, // exact resource beats template
		{"file:///x/a/b", "", false},         // {name} does not match '/'
		{"file:///z/readme", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			r, ok := c.Resource(tt.uri)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, Route{tt.backend, tt.uri}, r)
			}
		})
	}
	assert.Equal(t, []string{"files", "other"}, c.Backends(KindTemplates))
	assert.Equal(t, []string{"other"}, c.Backends(KindResources))
	assert.Empty(t, c.Backends(KindTools))
}

func TestDeterminism(t *testing.T) {
	p := Policy{Strategy: config.StrategyPriority, Order: []string{"a", "b", "c", "d"}, Priority: []string{"c"}}
	inv := []Inventory{
		{Backend: "a", Tools: tools("z", "search", "y"), Prompts: prompts("p", "q"),
			Resources: []*mcp.Resource{{URI: "u://1", Name: "a"}, {URI: "u://0"}}},
		{Backend: "b", Tools: tools("search", "a"), Prompts: prompts("q"),
			Resources: []*mcp.Resource{{URI: "u://1", Name: "b"}},
			Templates: []*mcp.ResourceTemplate{{URITemplate: "t://{x}", Name: "b"}}},
		{Backend: "c", Tools: tools("search"), Templates: []*mcp.ResourceTemplate{{URITemplate: "t://{x}", Name: "c"}}},
		{Backend: "d", Tools: tools("m", "search"), Resources: []*mcp.Resource{{URI: "u://2"}}},
		{Backend: "unconfigured", Tools: tools("search")},
	}
	render := func(inv []Inventory) string {
		c, conflicts, err := Build(p, inv)
		require.NoError(t, err)
		b, err := json.Marshal(map[string]any{
			"tools": c.Tools, "prompts": c.Prompts, "resources": c.Resources,
			"templates": c.Templates, "conflicts": conflicts,
			"backends": []any{c.Backends(KindTools), c.Backends(KindPrompts), c.Backends(KindResources), c.Backends(KindTemplates)},
		})
		require.NoError(t, err)
		return string(b)
	}
	want := render(inv)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(inv)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		assert.Equal(t, want, render(shuffled))
	}
	assert.Contains(t, want, `"unconfigured_search"`)
}

func TestInputsNotMutated(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	inv := []Inventory{
		{Backend: "a", Tools: []*mcp.Tool{{Name: "t", Description: "d"}, {Name: "s", InputSchema: schema}},
			Prompts: prompts("p")},
		{Backend: "b", Tools: tools("t"), Prompts: prompts("p")},
	}
	before, err := json.Marshal(inv)
	require.NoError(t, err)
	p := Policy{Order: []string{"a", "b"}, Overrides: map[string]config.BackendOverrides{
		"a": {Tools: map[string]config.Override{"t": {Name: "tt", Description: "new"}},
			Prompts: map[string]config.Override{"p": {Description: "new"}}},
	}}
	c, _, err := Build(p, inv)
	require.NoError(t, err)
	after, err := json.Marshal(inv)
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after))
	assert.Nil(t, inv[0].Tools[0].InputSchema)

	tool, _, ok := c.Tool("tt")
	require.True(t, ok)
	assert.Equal(t, map[string]any{"type": "object"}, tool.InputSchema)
	assert.Equal(t, "new", tool.Description)
	tool, _, ok = c.Tool("a_s")
	require.True(t, ok)
	assert.Equal(t, schema, tool.InputSchema)
}
