// Command vmcp is the virtual MCP server: one Streamable HTTP endpoint in
// front of many MCP servers.
//
//	vmcp serve --config FILE [--listen HOST:PORT] [--pprof HOST:PORT]
//	vmcp validate --config FILE
//	vmcp import FILE
//	vmcp status [--url URL]
//	vmcp accept-tool-change [--url URL] BACKEND TOOL
//	vmcp version
//	vmcp help [COMMAND]
//
// FILE is vmcp's YAML or a client's MCP server list (Claude Desktop /
// Cursor "mcpServers" JSON, VS Code "servers" JSON), recognised by content
// (pkg/config). Every command takes -h/--help.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/vmcp/vmcp/pkg/vmcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func version() string { return vmcp.Version }

// run executes one subcommand and returns the process exit code: 0 on
// success (help included), 1 when the command failed, 2 for a usage error
// (unknown command or flag; the usage goes to stderr).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		writeUsage(stdout)
		return 0
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "vmcp: unknown command %q\n\n", args[0])
		writeUsage(stderr)
		return 2
	}
	return runCommand(c, args[1:], stdout, stderr)
}
