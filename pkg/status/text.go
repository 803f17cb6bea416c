package status

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// maxReportBytes bounds the status document Fetch reads.
const maxReportBytes = 4 << 20

// Fetch GETs the Report at url (a vmcp's /status) as JSON with hc (nil:
// http.DefaultClient). A non-200 answer, a body that is not a Report, or
// one over 4 MiB is an error naming the URL.
func Fetch(ctx context.Context, hc *http.Client, url string) (Report, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	var rep Report
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return rep, fmt.Errorf("status: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return rep, fmt.Errorf("status: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReportBytes+1))
	switch {
	case err != nil:
		return rep, fmt.Errorf("status: reading %s: %w", url, err)
	case len(body) > maxReportBytes:
		return rep, fmt.Errorf("status: %s: answer larger than %d bytes", url, maxReportBytes)
	case resp.StatusCode != http.StatusOK:
		return rep, fmt.Errorf("status: %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body[:min(len(body), 200)])))
	}
	if err := json.Unmarshal(body, &rep); err != nil {
		return rep, fmt.Errorf("status: %s: not a vmcp status report: %w", url, err)
	}
	return rep, nil
}

// Write prints r for a terminal: a summary line, a table of backends, the
// session counts and the catalogue with what was withheld and why.
func Write(w io.Writer, r Report) error {
	ready := "ready"
	if !r.Ready {
		ready = "NOT READY"
	}
	if r.Ready {
		ready = "ready since " + stamp(r.Time, r.ReadySince)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (vmcp %s): %s; rendered %s\n", r.Name, r.Version, ready, r.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "started %s, up %s, config %s\n", stamp(r.Time, r.Started), Duration(r.UptimeSeconds), dash(r.Config))
	fmt.Fprintf(tw, "last minute: %.2f requests/s, %.2f errors/s\n\n", r.Rates.RequestsPerSecond, r.Rates.ErrorsPerSecond)
	fmt.Fprintln(tw, "BACKEND\tTRANSPORT\tREVISION\tSTATE\tSINCE\tRESTARTS\tTOOLS\tPROMPTS\tRESOURCES\tLAST ERROR")
	for _, b := range r.Backends {
		restarts := fmt.Sprint(b.Restarts)
		if b.Restarts > 0 {
			restarts += " (last " + stamp(r.Time, b.LastRestart) + ")"
		}
		lastErr := dash(b.LastError)
		if b.LastError != "" {
			lastErr += " (" + stamp(r.Time, b.LastErrorAt) + ")"
		}
		transport := b.Transport
		if b.Outbound != nil {
			transport += " (auth " + b.Outbound.String() + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", b.Name, transport, dash(b.Revision), b.State,
			stamp(r.Time, b.Since), restarts, b.Tools, b.Prompts, b.Resources, lastErr)
	}
	c := r.Catalogue
	fmt.Fprintf(tw, "\nsessions: %d Legacy, %d Modern listen streams, %d parked MRTR calls\n",
		r.Sessions.Legacy, r.Sessions.ModernListens, r.Sessions.ParkedCalls)
	writeSessions(tw, r.Sessions)
	fmt.Fprintf(tw, "catalogue: %d tools, %d prompts, %d resources, %d resource templates\n",
		c.Tools, c.Prompts, c.Resources, c.Templates)
	for _, s := range c.Withheld {
		fmt.Fprintf(tw, "withheld: %s\n", s)
	}
	for _, x := range c.Conflicts {
		fmt.Fprintf(tw, "conflict: %s %q kept from %s, not advertised from %s\n", x.Kind, x.Key, dash(x.Winner), x.Loser)
	}
	writeToolChanges(tw, r.Time, c.ToolChanges)
	for _, x := range r.Reloads {
		fmt.Fprintf(tw, "reload %s (%s): %s; added %s, removed %s, changed %s\n", x.Time.Format("2006-01-02 15:04:05 MST"), x.Source,
			x.Outcome, dash(strings.Join(x.Added, " ")), dash(strings.Join(x.Removed, " ")), dash(strings.Join(slices.Concat(x.Changed, x.Applied), " ")))
		for _, e := range append(x.Errors, x.Ignored...) {
			fmt.Fprintf(tw, "  %s\n", e)
		}
	}
	return tw.Flush()
}

// writeToolChanges prints the changed tool definitions, each with the
// command accepting it: the offered hash in full (--offered and
// accept_tool_changes' offered want all 64 digits).
func writeToolChanges(w io.Writer, now time.Time, cs []ToolChange) {
	for _, x := range cs {
		what := "listed"
		if x.Outcome == "denied" {
			what = "withheld"
		}
		who := ""
		if x.Principal != "" {
			who = " for principal " + x.Principal
		}
		fmt.Fprintf(w, "tool definition changed: backend %s tool %q%s %s since %s (pinned %.12s, offered %s)\n  accept it: vmcp accept-tool-change --offered %s %s %s\n",
			x.Backend, x.Tool, who, what, stamp(now, x.Since), x.Pinned, x.Offered, x.Offered, x.Backend, x.Tool)
	}
}

// writeSessions prints the listed Legacy sessions as a table.
func writeSessions(w io.Writer, s Sessions) {
	if len(s.List) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSESSION\tCLIENT\tREVISION\tPRINCIPAL\tAGE\tIDLE\tBACKEND SESSIONS\n")
	for _, x := range s.List {
		fmt.Fprintf(w, "%s…\t%s\t%s\t%s\t%s\t%s\t%d\n", x.ID, dash(strings.TrimSpace(x.Client+" "+x.ClientVersion)), x.Revision,
			dash(x.Principal), Duration(x.AgeSeconds), Duration(x.IdleSeconds), x.BackendSessions)
	}
	if len(s.List) < s.Legacy {
		fmt.Fprintf(w, "(newest %d of %d sessions)\n", len(s.List), s.Legacy)
	}
	fmt.Fprintln(w)
}

// stamp is t in UTC and how long before now it was ("-" for none).
func stamp(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339) + " (" + Duration(int64(now.Sub(t).Seconds())) + " ago)"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
