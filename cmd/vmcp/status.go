package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/vmcp/vmcp/pkg/status"
)

func statusCommand() *command {
	var target string
	var timeout time.Duration
	return &command{
		name:    "status",
		summary: "print a running vmcp's status page in the terminal",
		usage:   "status [--url URL] [--timeout DURATION]",
		details: `
Fetches GET /status from a running vmcp (as JSON) and prints each backend
(transport, negotiated revision, state, tool/prompt/resource counts, last
error), the client sessions and streams, and the catalogue with the names
withheld for colliding and the conflicts resolved by order. URL is the vmcp's
base URL or its /status URL. Exits 1 if the status cannot be fetched. The
same page is HTML in a browser at URL/status.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&target, "url", "http://127.0.0.1:8080", "`URL` of the vmcp (base URL, or ending in /status)")
			fs.DurationVar(&timeout, "timeout", 10*time.Second, "bound on fetching the status")
		},
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			if fs.NArg() > 0 {
				fmt.Fprintf(stderr, "vmcp status: unexpected argument %q\n", fs.Arg(0))
				return 2
			}
			u, err := statusURL(target)
			if err != nil {
				fmt.Fprintln(stderr, "vmcp status:", err)
				return 2
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			rep, err := status.Fetch(ctx, nil, u)
			if err != nil {
				fmt.Fprintln(stderr, "vmcp", err)
				return 1
			}
			if err := status.Write(stdout, rep); err != nil {
				fmt.Fprintln(stderr, "vmcp status:", err)
				return 1
			}
			return 0
		},
	}
}

// statusURL returns the /status URL for s: s itself if its path ends in
// /status, else s's path with /status appended.
func statusURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("invalid --url %q: want an http or https URL", s)
	}
	if !strings.HasSuffix(u.Path, "/status") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/status"
	}
	return u.String(), nil
}
