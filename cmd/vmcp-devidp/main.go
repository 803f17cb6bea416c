// Command vmcp-devidp runs pkg/devidp, a local OpenID Provider to try
// vmcp's auth block with (make run-auth starts it). It listens on loopback
// only and issues RS256 JWT access tokens by client_credentials: client
// alice (secret alice-secret) gets sub "alice", bob gets "bob"; client vmcp
// may also exchange tokens (RFC 8693). Not for production.
//
//	vmcp-devidp [--listen 127.0.0.1:9400] [--audience URL] [--token-lifetime 1h]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vmcp/vmcp/pkg/devidp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run serves until a signal arrives on stop (nil: SIGINT or SIGTERM) and
// returns the exit code: 0 after a clean stop, 1 on failure, 2 on a usage
// error.
func run(args []string, stdout, stderr io.Writer, stop chan os.Signal) int {
	fs := flag.NewFlagSet("vmcp-devidp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:9400", "loopback `host:port` to listen on")
	audience := fs.String("audience", "http://127.0.0.1:8080/mcp", "aud of issued tokens (vmcp's auth.audience)")
	lifetime := fs.Duration("token-lifetime", devidp.DefaultTokenLifetime, "access token lifetime")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	idp, err := devidp.Start(devidp.Config{Addr: *listen, Audience: *audience, TokenLifetime: *lifetime})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "vmcp-devidp: issuer %s, token endpoint %s, audience %s\n", idp.Issuer(), idp.TokenURL(), *audience)
	for _, c := range devidp.DefaultClients() {
		fmt.Fprintf(stdout, "  client %s, secret %s, grants %v\n", c.ID, c.Secret, grants(c))
	}
	if stop == nil {
		stop = make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	}
	<-stop
	if err := idp.Close(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func grants(c devidp.Client) []string {
	if len(c.Grants) == 0 {
		return []string{"client_credentials"}
	}
	out := make([]string, len(c.Grants))
	for i, g := range c.Grants {
		out[i] = string(g)
	}
	return out
}
