package config

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Format is the kind of configuration file ParseFile recognised, by content.
type Format string

// Formats ParseFile reads. A document whose top level has "mcpServers" is
// FormatMCPServers; one with "servers" is FormatVSCode; anything else is
// vmcp's own configuration.
const (
	// FormatVMCP is vmcp's YAML (or the same keys written as JSON).
	FormatVMCP Format = "vmcp"
	// FormatMCPServers is the {"mcpServers": {NAME: {...}}} JSON of
	// Claude Desktop, Claude Code and Cursor. Other top-level keys (the
	// clients' own settings) are ignored.
	FormatMCPServers Format = "mcpServers"
	// FormatVSCode is VS Code's {"servers": {NAME: {...}}, "inputs": [...]}
	// (.vscode/mcp.json). "inputs" is ignored; ${input:…} is refused.
	FormatVSCode Format = "vscode"
)

// String names the format for people: `Claude Desktop / Cursor "mcpServers" JSON`.
func (f Format) String() string {
	switch f {
	case FormatMCPServers:
		return `Claude Desktop / Cursor "mcpServers" JSON`
	case FormatVSCode:
		return `VS Code "servers" JSON (mcp.json)`
	}
	return "vmcp YAML"
}

// File is one configuration file as ParseFile read it.
type File struct {
	Name    string  // the file name given to ParseFile
	Format  Format  // what the content was recognised as
	Config  *Config // expanded, defaults applied, valid
	Renames []Rename
	// Skipped lists servers of an imported file left out because the
	// file marks them "disabled": true, in file order.
	Skipped []string
	// Warnings are problems that do not stop vmcp from starting: a
	// ${VAR} not set in the environment (it expands to ""), a stdio
	// command not found, a claims rule without auth. vmcp validate fails
	// on them.
	Warnings []Problem
	// Notes are advice that fails nothing: a stdio backend run through a
	// package launcher or container runner (npx, uvx, docker run, …) that
	// starts a process per Legacy client session (launcher.go).
	Notes []Problem

	source []byte    // the document, for FormatVMCP
	raw    []Backend // backends before ${VAR} expansion and defaults
}

// Problems returns f's warnings and notes, sorted by line (warnings first
// on one line).
func (f *File) Problems() []Problem {
	all := append(slices.Clip(f.Warnings), f.Notes...)
	sortProblems(all)
	return all
}

// Rename is a server of an imported file whose name is not a valid backend
// name, and the backend name BackendName gave it; Line is the name's line.
type Rename struct {
	From, To string
	Line     int
}

// clientServer is one entry of a client's mcpServers / servers map: the
// keys Claude Desktop, Cursor and VS Code use for stdio and remote servers.
type clientServer struct {
	Type    string            `yaml:"type"` // stdio | http | streamable-http | sse; default from url/command
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Disabled servers (Cline, Windsurf) are left out.
	Disabled bool `yaml:"disabled"`
	// AutoApprove and AlwaysAllow are client-side approval lists; vmcp
	// has none, so they are accepted and ignored.
	AutoApprove []string `yaml:"autoApprove"`
	AlwaysAllow []string `yaml:"alwaysAllow"`
}

// detectFormat recognises the document by its top-level keys.
func detectFormat(root *yaml.Node) Format {
	if root == nil || root.Kind != yaml.MappingNode {
		return FormatVMCP
	}
	var servers bool
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "mcpServers":
			return FormatMCPServers
		case "servers":
			servers = true
		case "backends":
			return FormatVMCP
		}
	}
	if servers {
		return FormatVSCode
	}
	return FormatVMCP
}

// importServers converts a client's server map into cfg.Backends, in file
// order, and fills the index so later problems name the imported file's
// keys and lines. A server with problems is reported and left out; if
// that leaves no backend, "backends" is marked malformed so validation
// does not add "at least one backend is required".
func importServers(root *yaml.Node, f *File, ix *index, ps *problems, cfg *Config) {
	ix.root = root.Line
	w := &walker{ix: ix, ps: ps}
	top, servers := serverMap(w, root, f.Format)
	if isNull(servers) {
		return
	}
	if servers.Kind != yaml.MappingNode {
		ps.at(servers.Line, top, "want a mapping of server names to servers, got "+kindName(servers))
		ix.bad["backends"] = true
		return
	}
	pairs := w.pairs(servers, top)
	dropped := 0
	taken := map[string]bool{} // valid names are kept: reserve them first
	for _, kv := range pairs {
		if backendNameRE.MatchString(kv[0].Value) {
			taken[kv[0].Value] = true
		}
	}
	for _, kv := range pairs {
		path := joinKey(top, kv[0].Value)
		s, ok := decodeServer(w, kv[0], kv[1], path)
		if !ok {
			dropped++
			continue
		}
		if s.Disabled {
			f.Skipped = append(f.Skipped, kv[0].Value)
			continue
		}
		name := kv[0].Value
		if !backendNameRE.MatchString(name) {
			name = uniqueName(BackendName(name), taken)
			f.Renames = append(f.Renames, Rename{From: kv[0].Value, To: name, Line: kv[0].Line})
		}
		i := len(cfg.Backends)
		cfg.Backends = append(cfg.Backends, s.backend(name))
		mapIndex(ix, path, joinIndex("backends", i), kv[0])
		if t := s.Type; t != "" && transportOf(t) == "" {
			ps.add(joinIndex("backends", i)+".transport", fmt.Sprintf("unknown type %q: want stdio, http (or streamable-http) or sse", t))
		}
	}
	if dropped > 0 && len(cfg.Backends) == 0 {
		ix.bad["backends"] = true
	}
}

// serverMap returns the top-level key holding the servers and its value
// (nil if absent), reporting other top-level keys the format does not have.
func serverMap(w *walker, root *yaml.Node, f Format) (string, *yaml.Node) {
	top := "servers"
	if f == FormatMCPServers {
		top = "mcpServers"
	}
	var servers *yaml.Node
	for _, kv := range w.pairs(root, "") {
		switch k := kv[0].Value; {
		case k == top:
			w.ix.entries[top] = entry{key: kv[0], val: deref(kv[1])}
			servers = deref(kv[1])
		case f == FormatMCPServers && k == "servers":
			w.ps.at(kv[0].Line, k, `both "mcpServers" and "servers" are present; keep one`)
		case f == FormatVSCode && k != "inputs":
			w.ps.at(kv[0].Line, joinKey("", k), fmt.Sprintf(`unknown key %q: a VS Code MCP configuration has "servers" (and "inputs", which vmcp ignores)`, k))
		}
	}
	w.ix.alias["backends"] = top
	return top, servers
}

// decodeServer checks one server entry against clientServer's keys and
// decodes it; problems (and ${input:…} references) are reported at their
// lines.
func decodeServer(w *walker, key, val *yaml.Node, path string) (clientServer, bool) {
	var s clientServer
	before := len(w.ps.list)
	w.walk(val, reflect.TypeOf(s), path, key)
	if w.ix.isBad(path) || len(w.ps.list) > before {
		return s, false
	}
	checkClientVars(w.ps, deref(val), path)
	if len(w.ps.list) > before {
		return s, false
	}
	if err := deref(val).Decode(&s); err != nil {
		line, msg := splitYAMLError(err)
		w.ps.at(line, path, msg)
		return s, false
	}
	return s, true
}

// clientVarRE matches the ${scheme:…} variables of VS Code and other
// clients (${input:id}, ${env:NAME}, ${command:…}, ${config:…}).
var clientVarRE = regexp.MustCompile(`\$\{([A-Za-z]+):([^{}]*)\}`)

// checkClientVars refuses every ${scheme:…} variable in the strings under
// n except ${env:NAME}: vmcp runs without the client that resolves them.
func checkClientVars(ps *problems, n *yaml.Node, path string) {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			checkClientVars(ps, k, joinKey(path, k.Value))
			checkClientVars(ps, n.Content[i+1], joinKey(path, k.Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			checkClientVars(ps, c, joinIndex(path, i))
		}
	case yaml.ScalarNode:
		for _, m := range clientVarRE.FindAllStringSubmatch(n.Value, -1) {
			switch m[1] {
			case "env":
			case "input":
				ps.at(n.Line, path, fmt.Sprintf("%s asks VS Code to prompt for input %q, which vmcp cannot do: "+
					"put the value in an environment variable and write ${NAME} (or the value itself)", m[0], m[2]))
			default:
				ps.at(n.Line, path, fmt.Sprintf("%s is resolved by the client, which vmcp cannot do: "+
					"use ${NAME} from the environment or the value itself", m[0]))
			}
		}
	}
}

var envVarRE = regexp.MustCompile(`\$\{env:([^{}]*)\}`)

// backend converts s into the Backend named name. ${env:NAME} (VS Code,
// Cursor) is rewritten to vmcp's ${NAME}.
func (s clientServer) backend(name string) Backend {
	conv := func(v string) string { return envVarRE.ReplaceAllString(v, "$${$1}") }
	convMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[conv(k)] = conv(v)
		}
		return out
	}
	b := Backend{Name: name, Command: conv(s.Command), URL: conv(s.URL), Transport: transportOf(s.Type),
		Env: convMap(s.Env), Headers: convMap(s.Headers)}
	for _, a := range s.Args {
		b.Args = append(b.Args, conv(a))
	}
	return b
}

// transportOf maps a client's server type to a vmcp transport: "" when t
// is empty (the default follows url or command) or unknown (reported).
func transportOf(t string) string {
	switch strings.ToLower(t) {
	case "stdio":
		return TransportStdio
	case "http", "streamable-http", "streamablehttp":
		return TransportStreamableHTTP
	case "sse":
		return TransportSSE
	}
	return ""
}

// mapIndex makes the index entries under the imported server at from
// (`mcpServers["My Server"]`) available under the backend path to
// ("backends[2]", with "type" as "transport"), and aliases to back to from,
// so validation problems carry the imported file's keys and lines.
func mapIndex(ix *index, from, to string, key *yaml.Node) {
	for p, e := range ix.entries {
		if p != from && !strings.HasPrefix(p, from+".") && !strings.HasPrefix(p, from+"[") {
			continue
		}
		rest := p[len(from):]
		if rest == ".type" {
			rest = ".transport"
		}
		ix.entries[to+rest] = e
	}
	ix.entries[to+".name"] = entry{key: key, val: key}
	ix.alias[to] = from
	ix.alias[to+".name"] = from
	ix.alias[to+".transport"] = from + ".type"
}

// BackendName maps a server name from a client's configuration to a valid
// backend name ([a-z0-9][a-z0-9_-]*): the name is lower-cased, every
// character other than a-z, 0-9, "_" and "-" becomes "-", and leading "-"
// and "_" are trimmed; a name left empty becomes "server". Valid names are
// unchanged. ("My Server" → "my-server", "@org/github" → "org-github".)
func BackendName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if name := strings.TrimLeft(b.String(), "-_"); name != "" {
		return name
	}
	return "server"
}

// uniqueName returns name, or name-2, name-3, … (the first not yet taken),
// and marks it taken. Valid names are taken before any mapping, so they
// never change; mapped names that collide get suffixes in file order.
func uniqueName(name string, taken map[string]bool) string {
	n := name
	for i := 2; taken[n]; i++ {
		n = name + "-" + strconv.Itoa(i)
	}
	taken[n] = true
	return n
}

// cloneBackends deep-copies bs (their maps and slices).
func cloneBackends(bs []Backend) []Backend {
	out := make([]Backend, len(bs))
	for i, b := range bs {
		b.Args = append([]string(nil), b.Args...)
		b.Env = cloneMap(b.Env)
		b.Headers = cloneMap(b.Headers)
		b.ForwardHeaders = append([]string(nil), b.ForwardHeaders...)
		if b.Auth != nil {
			a := *b.Auth
			a.Scopes = append([]string(nil), a.Scopes...)
			b.Auth = &a
		}
		out[i] = b
	}
	return out
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
