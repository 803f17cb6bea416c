package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"

	"gopkg.in/yaml.v3"
)

// Load reads the YAML file at path and returns Parse's result. A file that
// cannot be read yields the *os.PathError (wrapped; errors.Is works).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes one YAML document strictly, expands ${VAR} references from
// the environment (backend url, args, headers and env values; mrtr.state_key),
// applies defaults and validates. filename only labels problems. Any problem
// yields a *ValidationError listing all of them; the Config is then nil.
func Parse(data []byte, filename string) (*Config, error) {
	ix := newIndex()
	ps := &problems{file: filename, ix: ix}
	root, err := parseDocument(data)
	if err != nil {
		line, msg := splitYAMLError(err)
		ps.at(line, "", msg)
		return nil, ps.err()
	}

	var cfg Config
	if root != nil {
		ix.root = root.Line
		w := &walker{ix: ix, ps: ps}
		w.walk(root, reflect.TypeOf(cfg), "", nil)
		if w.visits > maxVisits || ix.bad[""] {
			return nil, ps.err() // not a usable mapping; nothing more to check
		}
		{
			if err := root.Decode(&cfg); err != nil {
				var te *yaml.TypeError
				if !errors.As(err, &te) {
					line, msg := splitYAMLError(err)
					ps.at(line, "", msg)
					return nil, ps.err()
				}
				if len(ps.list) == 0 { // not already reported by the walk
					for _, e := range te.Errors {
						line, msg := splitYAMLError(errors.New(e))
						ps.at(line, "", msg)
					}
				}
			}
		}
	}

	cfg.expandEnv()
	checkExplicit(ps, &cfg)
	cfg.ApplyDefaults()
	validate(ps, &cfg)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &cfg, nil
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
	}
	c.MRTR.StateKey = expand(c.MRTR.StateKey)
}
