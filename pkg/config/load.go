package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"
)

// Load reads the configuration file at path and returns Parse's result. A
// file that cannot be read yields the *os.PathError (wrapped; errors.Is
// works).
func Load(path string) (*Config, error) {
	f, err := Read(path)
	if err != nil {
		return nil, err
	}
	return f.Config, nil
}

// Read reads the configuration file at path and returns ParseFile's result.
// A file that cannot be read yields the *os.PathError (wrapped).
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return parseFile(data, path, dir)
}

// Parse is ParseFile's Config: the file decoded, defaults applied and
// validated; any problem yields a *ValidationError and a nil Config.
func Parse(data []byte, filename string) (*Config, error) {
	f, err := ParseFile(data, filename)
	if err != nil {
		return nil, err
	}
	return f.Config, nil
}

// ParseFile decodes one configuration document, recognised by content (see
// Format): vmcp's YAML (or the same keys as JSON), decoded strictly, or a
// client's MCP server list (Claude Desktop / Cursor mcpServers JSON, VS
// Code servers JSON), converted into backends. It then expands ${VAR}
// references from the environment (backend url, args, headers and env
// values; mrtr.state_key, cluster.redis_password), applies defaults and validates, one pipeline for
// every format. filename only labels problems. Unset ${VAR}s, stdio
// commands not found and authorization rules matching claims without auth
// are File.Warnings; launcher backends with the default isolation are
// File.Notes. Any other problem yields a *ValidationError listing all of
// them and every warning and note, found in one pass (file:line each); the
// File is then nil. Only a document that is not YAML or JSON at all, or
// whose top level is unusable, stops the pass early.
func ParseFile(data []byte, filename string) (*File, error) {
	return parseFile(data, filename, "")
}

// parseFile is ParseFile; a non-empty dir is the directory relative stdio
// command paths resolve against (Read: the config file's own).
func parseFile(data []byte, filename, dir string) (*File, error) {
	ix := newIndex()
	ps := &problems{file: filename, ix: ix}
	root, err := parseRoot(data)
	if err != nil {
		line, msg := splitYAMLError(err)
		ps.at(line, "", msg)
		return nil, ps.err()
	}
	f := &File{Name: filename, Format: detectFormat(root)}
	var cfg Config
	if f.Format == FormatVMCP {
		f.source = data
		if !decodeVMCP(root, ix, ps, &cfg) {
			return nil, ps.err()
		}
	} else {
		importServers(root, f, ix, ps, &cfg)
	}
	f.raw = cloneBackends(cfg.Backends)
	warnings := unsetVars(ps, &cfg)
	cfg.expandEnv()
	resolveCommands(cfg.Backends, dir)
	checkExplicit(ps, &cfg)
	cfg.ApplyDefaults()
	validate(ps, &cfg)
	warnings = append(warnings, missingCommands(ps, cfg.Backends)...)
	warnings = append(warnings, deadClaimRules(ps, &cfg)...)
	warnings = append(warnings, emptyRedact(ps, &cfg)...)
	notes := launcherNotes(ps, cfg.Backends)
	if err := ps.err(append(slices.Clip(warnings), notes...)...); err != nil {
		return nil, err
	}
	sortProblems(warnings)
	f.Warnings, f.Notes, f.Config = warnings, notes, &cfg
	return f, nil
}

// parseRoot returns the top-level node of data: parsed as JSON (comments
// and trailing commas allowed) when it starts with "{" (falling back to
// YAML, whose flow mappings start so too), else as YAML.
func parseRoot(data []byte) (*yaml.Node, error) {
	if !looksJSON(data) {
		return parseDocument(data)
	}
	n, err := parseJSONNode(data)
	if err != nil {
		if y, yerr := parseDocument(data); yerr == nil {
			return y, nil // a YAML flow mapping, {backends: [...]}, is not JSON
		}
	}
	return n, err
}

// decodeVMCP checks root against Config's schema (unknown and duplicate
// keys, kinds, scalars) and decodes it into cfg. It reports false when the
// document is not usable enough to check further.
func decodeVMCP(root *yaml.Node, ix *index, ps *problems, cfg *Config) bool {
	if root == nil {
		return true
	}
	ix.root = root.Line
	w := &walker{ix: ix, ps: ps}
	w.walk(root, reflect.TypeOf(*cfg), "", nil)
	if w.visits > maxVisits || ix.bad[""] {
		return false // not a usable mapping; nothing more to check
	}
	if err := root.Decode(cfg); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			line, msg := splitYAMLError(err)
			ps.at(line, "", msg)
			return false
		}
		if len(ps.list) == 0 { // not already reported by the walk
			for _, e := range te.Errors {
				line, msg := splitYAMLError(errors.New(e))
				ps.at(line, "", msg)
			}
		}
	}
	return true
}

// parseDocument returns the top-level node of the single YAML document in
// data, or nil for an empty document.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, err
	default:
		return nil, fmt.Errorf("line %d: want one YAML document, found more", extra.Line)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

var envRef = regexp.MustCompile(`\$\{[^{}]*\}`)

// expand replaces each ${VAR} in s with os.Getenv("VAR"). Bare $VAR and
// other dollar signs are left alone.
func expand(s string) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		return os.Expand(ref, os.Getenv)
	})
}

// expandEnv expands ${VAR} in the fields documented as expanded.
func (c *Config) expandEnv() {
	for i := range c.Backends {
		b := &c.Backends[i]
		b.URL = expand(b.URL)
		for j := range b.Args {
			b.Args[j] = expand(b.Args[j])
		}
		for k, v := range b.Headers {
			b.Headers[k] = expand(v)
		}
		for k, v := range b.Env {
			b.Env[k] = expand(v)
		}
		if b.Auth != nil {
			b.Auth.ClientSecret = expand(b.Auth.ClientSecret)
		}
	}
	c.MRTR.StateKey = expand(c.MRTR.StateKey)
	c.Cluster.RedisPassword = expand(c.Cluster.RedisPassword)
	c.Security.AdminToken = expand(c.Security.AdminToken)
	if s := c.Cluster.RedisSentinel; s != nil {
		s.Password = expand(s.Password)
	}
}
