package config

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// YAML returns f as vmcp's YAML, for `vmcp import`: a vmcp file unchanged;
// an imported file's servers as backends, in file order, with ${VAR}
// references as written (VS Code's ${env:NAME} as ${NAME}) and no defaults
// filled in, headed by comments naming the source, each renamed server and
// each disabled one left out, and a comment above each launcher backend
// (npx, uvx, docker run, …) on the isolation it keeps, session. Parse accepts the result as the same backends.
// An error comes only from the YAML encoder.
func (f *File) YAML() ([]byte, error) {
	if f.Format == FormatVMCP {
		return f.source, nil
	}
	var head []string
	head = append(head, fmt.Sprintf("vmcp configuration imported from %s (%s).", f.Name, f.Format))
	for _, r := range f.Renames {
		head = append(head, fmt.Sprintf("Server %q is backend %q (backend names are [a-z0-9][a-z0-9_-]*).", r.From, r.To))
	}
	for _, s := range f.Skipped {
		head = append(head, fmt.Sprintf("Server %q is disabled in %s and left out.", s, f.Name))
	}
	head = append(head, `Every key: README.md, "Configuration reference". Check with: vmcp validate --config FILE`)

	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, b := range f.raw {
		n := backendNode(b)
		if l := launcherOf(b.Command, b.Args); l != "" {
			n.HeadComment = launcherComment(l)
			n.Content[len(n.Content)-2].FootComment = "isolation: shared" // below the last key
		}
		list.Content = append(list.Content, n)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, HeadComment: strings.Join(head, "\n"),
		Content: []*yaml.Node{str("backends"), list}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("config: encoding imported YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config: encoding imported YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// backendNode is b's YAML mapping: name, then url/transport/headers or
// command/args/env, leaving out what is empty.
func backendNode(b Backend) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	add("name", str(b.Name))
	if b.URL != "" {
		add("url", str(b.URL))
	}
	if b.Transport != "" {
		add("transport", str(b.Transport))
	}
	if len(b.Headers) > 0 {
		add("headers", mapNode(b.Headers))
	}
	if b.Command != "" {
		add("command", str(b.Command))
	}
	if len(b.Args) > 0 {
		args := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range b.Args {
			args.Content = append(args.Content, str(a))
		}
		add("args", args)
	}
	if len(b.Env) > 0 {
		add("env", mapNode(b.Env))
	}
	return m
}

func mapNode(m map[string]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range sortedKeys(m) {
		n.Content = append(n.Content, str(k), str(m[k]))
	}
	return n
}

// str is a string scalar; the encoder quotes it where YAML would read it
// as something else.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// launcherComment explains, above a backend run through launcher l, what
// the default isolation costs and how to choose shared (vmcp import keeps
// session: only the user knows whether the server keeps per-client state
// or asks its clients, which shared would break).
func launcherComment(l string) string {
	return strings.Join([]string{
		fmt.Sprintf("Runs through %s: each Legacy client session starts its own process", l),
		"of this server (isolation: session, the default; Modern clients share one),",
		"typically 100 MB or more and seconds of start-up each. If the server keeps",
		"no per-client state and never asks its client (sampling, elicitation,",
		"roots), uncomment \"isolation: shared\" below for one process for every",
		"client (its log messages, and Legacy clients' progress, are then dropped);",
		"or bound the processes with max_processes. Writing isolation, either",
		"value, silences vmcp validate's note.",
	}, "\n")
}
