package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// configReference is where every configuration key is documented.
const configReference = `Configuration reference: README.md, section "Configuration reference"
(and "Use your existing client config" for Claude Desktop, Cursor and VS Code files).`

// command is one vmcp subcommand: its help and how it runs.
type command struct {
	name    string
	summary string // one line, for the command list
	usage   string // the synopsis after "usage: "
	details string // what it does, in a few lines
	// flags declares the command's flags on fs (may be nil).
	flags func(fs *flag.FlagSet)
	// run executes it after its flags parsed; it returns the exit code.
	run func(fs *flag.FlagSet, stdout, stderr io.Writer) int
}

// commands is every subcommand, in the order help lists them; filled in
// by init (the help command refers to the list).
var commands []*command

func init() {
	commands = []*command{serveCommand(), validateCommand(), importCommand(), statusCommand(), acceptCommand(), versionCommand(), helpCommand()}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// writeUsage prints the command list.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, "vmcp is a virtual MCP server: one MCP Streamable HTTP endpoint in front of many MCP servers.\n\nusage:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  vmcp %s\n", c.usage)
	}
	fmt.Fprint(w, "\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'vmcp help COMMAND' or 'vmcp COMMAND --help' for a command's flags.\n\n"+configReference+"\n")
}

// writeHelp prints c's help: what it does, its flags, the config reference.
func writeHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "vmcp %s: %s\n\nusage: vmcp %s\n\n%s\n", c.name, c.summary, c.usage, strings.TrimSpace(c.details))
	fs := newFlagSet(c)
	var lines []string
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + strings.ToUpper(arg)
		}
		line := fmt.Sprintf("  --%s%s\n        %s", f.Name, arg, text)
		if f.DefValue != "" && f.DefValue != "false" {
			line += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines = append(lines, line)
	})
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nflags:\n%s\n", strings.Join(lines, "\n"))
	}
	fmt.Fprint(w, "  -h, --help\n        print this help\n\n"+configReference+"\n")
}

// newFlagSet returns c's flags, silent: run reports parse errors itself.
func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("vmcp "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c.flags != nil {
		c.flags(fs)
	}
	return fs
}

// runCommand parses c's flags from args and runs it. -h/--help prints c's
// help on stdout (exit 0); a bad flag prints the error and c's usage on
// stderr (exit 2).
func runCommand(c *command, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeHelp(stdout, c)
			return 0
		}
		fmt.Fprintf(stderr, "vmcp %s: %v\nusage: vmcp %s\nRun 'vmcp help %s' for more.\n", c.name, err, c.usage, c.name)
		return 2
	}
	return c.run(fs, stdout, stderr)
}

func helpCommand() *command {
	return &command{
		name:    "help",
		summary: "print help for vmcp or one command",
		usage:   "help [COMMAND]",
		details: "Without COMMAND, lists the commands; with one, prints what it does and its flags.",
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			switch fs.NArg() {
			case 0:
				writeUsage(stdout)
				return 0
			case 1:
				if c := lookup(fs.Arg(0)); c != nil {
					writeHelp(stdout, c)
					return 0
				}
				fmt.Fprintf(stderr, "vmcp help: unknown command %q\n\n", fs.Arg(0))
			default:
				fmt.Fprint(stderr, "vmcp help: at most one command\n\n")
			}
			writeUsage(stderr)
			return 2
		},
	}
}

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print vmcp's version",
		usage:   "version",
		details: "Prints \"vmcp\" and the version of this build.",
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			if fs.NArg() > 0 {
				fmt.Fprintf(stderr, "vmcp version: unexpected argument %q\n", fs.Arg(0))
				return 2
			}
			fmt.Fprintln(stdout, "vmcp", version())
			return 0
		},
	}
}
