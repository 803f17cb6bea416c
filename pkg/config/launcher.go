package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// launcher is a command that fetches, installs or unpacks a program and
// then runs it (a package launcher or container runner): each process it
// starts pays that start-up and usually a runtime's memory.
type launcher struct {
	cmd string   // the command's base name (".exe", ".cmd", ".bat" stripped)
	sub []string // the subcommand that must follow the global flags; nil: none
	// flagValues are global flags (before sub) that take the next argument.
	flagValues []string
	// remote, if set, must hold for an argument after sub: the program is
	// fetched (deno run https://…, go run module@version), not local.
	remote func(arg string) bool
}

// name is how a note calls l: "npx", "docker run".
func (l launcher) name() string { return strings.Join(append([]string{l.cmd}, l.sub...), " ") }

var (
	dockerFlags = []string{"-c", "--context", "-H", "--host", "--config", "-l", "--log-level"}
	podmanFlags = []string{"-c", "--connection", "--url", "--root", "--runroot", "--log-level"}
	uvFlags     = []string{"--directory", "--project", "--cache-dir", "--config-file"}
)

// launchers is every launcher vmcp recognises, by command and subcommand.
var launchers = []launcher{
	{cmd: "npx"},
	{cmd: "npm", sub: []string{"exec"}},
	{cmd: "npm", sub: []string{"x"}},
	{cmd: "pnpx"},
	{cmd: "pnpm", sub: []string{"dlx"}},
	{cmd: "yarn", sub: []string{"dlx"}},
	{cmd: "bunx"},
	{cmd: "bun", sub: []string{"x"}},
	{cmd: "uvx"},
	{cmd: "uv", sub: []string{"tool", "run"}, flagValues: uvFlags},
	{cmd: "uv", sub: []string{"run"}, flagValues: uvFlags},
	{cmd: "pipx", sub: []string{"run"}},
	{cmd: "dnx"},
	{cmd: "docker", sub: []string{"run"}, flagValues: dockerFlags},
	{cmd: "docker", sub: []string{"container", "run"}, flagValues: dockerFlags},
	{cmd: "podman", sub: []string{"run"}, flagValues: podmanFlags},
	{cmd: "podman", sub: []string{"container", "run"}, flagValues: podmanFlags},
	{cmd: "nerdctl", sub: []string{"run"}},
	{cmd: "deno", sub: []string{"run"}, remote: remoteScript},
	{cmd: "go", sub: []string{"run"}, remote: remoteModule},
}

// remoteScript is a deno program fetched when it starts: a URL or an npm:
// or jsr: specifier.
func remoteScript(a string) bool {
	for _, p := range []string{"https://", "http://", "npm:", "jsr:"} {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// remoteModule is a Go package at a version (go run example.com/x@v1),
// downloaded and compiled when it starts.
func remoteModule(a string) bool { return !strings.HasPrefix(a, "-") && strings.Contains(a, "@") }

// launcherOf returns the launcher command with args runs through ("npx",
// "docker run"), or "" if it is none. A Windows `cmd /c npx …` is looked
// through.
func launcherOf(command string, args []string) string {
	base := baseCommand(command)
	if base == "cmd" && len(args) >= 2 && strings.EqualFold(args[0], "/c") {
		base, args = baseCommand(args[1]), args[2:]
	}
	for _, l := range launchers {
		if l.cmd == base && l.matches(args) {
			return l.name()
		}
	}
	return ""
}

// baseCommand is command's file name, lower-cased, without a Windows
// executable extension.
func baseCommand(command string) string {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(command, `\`, "/")))
	for _, ext := range []string{".exe", ".cmd", ".bat"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// matches reports whether args, after the global flags, start with l.sub
// and (for a remote launcher) name a fetched program.
func (l launcher) matches(args []string) bool {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		if slices.Contains(l.flagValues, args[i]) {
			i++ // the flag's value
		}
	}
	rest := args[min(i, len(args)):]
	if len(rest) < len(l.sub) || !slices.Equal(rest[:len(l.sub)], l.sub) {
		return false
	}
	return l.remote == nil || slices.ContainsFunc(rest[len(l.sub):], l.remote)
}

// launcherNote is the note for a stdio backend run through launcher name
// with the default isolation.
func launcherNote(name string) string {
	return fmt.Sprintf("runs through %s: each Legacy client session starts its own process of this backend "+
		"(isolation: session, the default; Modern clients share one), and a launcher like %s typically costs "+
		"100 MB or more and seconds of start-up per process. If the server keeps no per-client state and "+
		"never asks its client (sampling, elicitation, roots), set \"isolation: shared\" for one process for "+
		"every client (its log messages, and Legacy clients' progress, are then dropped); max_processes bounds "+
		"the processes; \"isolation: session\" keeps this and silences this note", name, name)
}

// launcherNotes returns a note for every stdio backend (after defaults)
// run through a launcher whose file does not write its isolation.
func launcherNotes(ps *problems, bs []Backend) []Problem {
	var out []Problem
	for i, b := range bs {
		p := joinIndex("backends", i)
		if _, written := ps.ix.entries[p+".isolation"]; written || b.Transport != TransportStdio {
			continue
		}
		if l := launcherOf(b.Command, b.Args); l != "" {
			if n, ok := ps.warn(SeverityNote, p+".command", launcherNote(l)); ok {
				out = append(out, n)
			}
		}
	}
	return out
}
