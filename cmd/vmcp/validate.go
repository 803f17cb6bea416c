package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vmcp/vmcp/pkg/config"
)

func validateCommand() *command {
	var path string
	return &command{
		name:    "validate",
		summary: "check a configuration file and print every problem with file:line",
		usage:   "validate --config FILE",
		details: `
Reads FILE as serve would (vmcp's YAML, or a Claude Desktop / Cursor / VS Code
MCP server list) and prints every problem, found in one pass and sorted by
line, as FILE:LINE: KEY: MESSAGE on stderr: unknown or malformed keys,
invalid values, and, labelled "warning:" (serve only warns about them), a
stdio command that does not exist or is not on PATH, every ${VAR} not set in
the environment and a claims rule without auth. A stdio backend run through
a package launcher or container runner (npx, uvx, docker run, ...) without
an isolation key gets a "note:" on what a process per Legacy client session
costs and how to choose isolation: shared. Exits 0 and prints "config OK"
when there is no problem (notes do not count), 1 otherwise.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&path, "config", "", "configuration `FILE` (required; may also be given as the argument)")
		},
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			f, code := load("validate", fs, path, stderr)
			if f == nil {
				return code
			}
			printProblems(stderr, f)
			if len(f.Warnings) > 0 {
				return 1
			}
			n, noun := len(f.Config.Backends), "backends"
			if n == 1 {
				noun = "backend"
			}
			fmt.Fprintf(stdout, "config OK: %d %s%s\n", n, noun, readAs(f))
			return 0
		},
	}
}

// printProblems prints f's warnings and notes, one Labelled line each,
// sorted by line.
func printProblems(w io.Writer, f *config.File) {
	for _, p := range f.Problems() {
		fmt.Fprintln(w, p.Labelled())
	}
}

// readAs describes an imported file for the "config OK" line: its format
// and renamed servers; "" for vmcp's own YAML.
func readAs(f *config.File) string {
	if f.Format == config.FormatVMCP {
		return ""
	}
	parts := []string{"read as " + f.Format.String()}
	for _, r := range f.Renames {
		parts = append(parts, fmt.Sprintf("server %q is backend %q", r.From, r.To))
	}
	for _, s := range f.Skipped {
		parts = append(parts, fmt.Sprintf("disabled server %q left out", s))
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "print a client's MCP config (Claude Desktop, Cursor, VS Code) as vmcp YAML",
		usage:   "import FILE",
		details: `
Reads FILE, a Claude Desktop / Cursor {"mcpServers": ...} or VS Code
{"servers": ...} (.vscode/mcp.json) file, and prints the equivalent vmcp
YAML on stdout, ready for 'vmcp validate' and 'vmcp serve' and for editing:
one backend per enabled server, in file order, ${VAR}s kept as written.
Server names that are not valid backend names are mapped (lower-case, other
characters to "-", leading "-"/"_" trimmed, "-2", "-3"... on collisions) and
listed in the output's comments. A server run through a package launcher or
container runner (npx, uvx, docker run, ...) keeps the default isolation,
session (a process per Legacy client session), with a comment above it on
that cost and a commented-out "isolation: shared" to choose one process for
every client. A problem in FILE is printed with file:line and exits 1
(with every warning and note found in the same pass); unset ${VAR}s and
commands not found are printed as warnings, and launcher notes, on stderr.
A vmcp YAML file is printed unchanged.`,
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			if fs.NArg() != 1 {
				fmt.Fprint(stderr, "vmcp import: want one FILE\nusage: vmcp import FILE\n")
				return 2
			}
			f, err := config.Read(fs.Arg(0))
			if err != nil {
				printError(stderr, err)
				return 1
			}
			out, err := f.YAML()
			if err != nil {
				fmt.Fprintln(stderr, "vmcp import:", err)
				return 1
			}
			printProblems(stderr, f)
			if _, err := stdout.Write(out); err != nil {
				fmt.Fprintln(stderr, "vmcp import:", err)
				return 1
			}
			return 0
		},
	}
}
