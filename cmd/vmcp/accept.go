package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// adminTokenEnv is the environment variable accept-tool-change reads the
// admin token from by default (a flag would show it in ps and shell history).
const adminTokenEnv = "VMCP_ADMIN_TOKEN"

func acceptCommand() *command {
	var target, tokenEnv, offered string
	var timeout time.Duration
	return &command{
		name:    "accept-tool-change",
		summary: "accept a backend's changed tool definition on a running vmcp",
		usage:   "accept-tool-change [--url URL] [--token-env NAME] [--timeout DURATION] [--offered HASH] BACKEND TOOL",
		details: `
With security.tool_changes: deny, a tool whose backend changed its definition
(name, description, schemas, annotations) is withheld until accepted; with
warn it stays listed and on /status until accepted. This makes the definition
BACKEND now offers for TOOL (the backend's own tool name, as /status shows it)
the pinned one, on every node of a cluster. It posts to URL/admin/tool-changes/accept
with the admin token (security.admin_token) read from the environment variable
NAME (default VMCP_ADMIN_TOKEN). With --offered, only the definition of that
hash (the offered one /status showed) is accepted, not one the backend offers
since. It prints the hash of the definition accepted. Exits 1 if nothing is
pending for that tool or the request fails. Without the admin endpoint, name
the tool in security.accept_tool_changes, best with the offered hash /status
shows ({backend: B, tool: T, offered: HASH}: only that definition), and
reload the config (SIGHUP) instead; an entry accepts once, when a load
brings it, not again on later reloads.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&target, "url", "http://127.0.0.1:8080", "base `URL` of the vmcp")
			fs.StringVar(&tokenEnv, "token-env", adminTokenEnv, "environment variable holding the admin token")
			fs.DurationVar(&timeout, "timeout", 10*time.Second, "bound on the request")
			fs.StringVar(&offered, "offered", "", "accept only the definition of this `HASH` (/status's offered), not one offered since")
		},
		run: func(fs *flag.FlagSet, stdout, stderr io.Writer) int {
			u, token, problem := acceptArgs(fs, target, tokenEnv, offered)
			if problem != "" {
				fmt.Fprintln(stderr, "vmcp accept-tool-change:", problem)
				return 2
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			got, err := postAccept(ctx, u.String(), token, vmcp.AcceptRequest{Backend: fs.Arg(0), Tool: fs.Arg(1), Offered: offered})
			if err != nil {
				fmt.Fprintln(stderr, "vmcp accept-tool-change:", err)
				return 1
			}
			fmt.Fprintf(stdout, "accepted: backend %s tool %q", fs.Arg(0), fs.Arg(1))
			if got.Offered != "" {
				fmt.Fprintf(stdout, " definition %s", got.Offered)
			}
			fmt.Fprintln(stdout)
			return 0
		},
	}
}

// acceptArgs checks accept-tool-change's arguments and returns the admin
// endpoint's URL and the token, or what is wrong with them.
func acceptArgs(fs *flag.FlagSet, target, tokenEnv, offered string) (*url.URL, string, string) {
	if fs.NArg() != 2 {
		return nil, "", "want BACKEND and TOOL"
	}
	if offered != "" && !config.IsHash(offered) {
		return nil, "", fmt.Sprintf("invalid --offered %q: want all 64 lower-case hex digits of the offered hash (/status, vmcp status)", offered)
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", fmt.Sprintf("invalid --url %q: want an http or https URL", target)
	}
	token := os.Getenv(tokenEnv)
	if token == "" {
		return nil, "", fmt.Sprintf("set %s to the admin token (security.admin_token)", tokenEnv)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + vmcp.AdminAcceptPath
	return u, token, ""
}

// postAccept posts one accept to the admin endpoint at u and returns its
// answer; an answer other than 200 is an error carrying the server's
// message.
func postAccept(ctx context.Context, u, token string, ar vmcp.AcceptRequest) (vmcp.AcceptResponse, error) {
	var got vmcp.AcceptResponse
	body, _ := json.Marshal(ar)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return got, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return got, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&got) // an older vmcp: {"accepted":true}
		return got, nil
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
	return got, fmt.Errorf("%s: %s", resp.Status, e.Error)
}
