// Package status is vmcp's operator view: the Report of what a running vmcp
// is doing (each backend's transport, revision, state, last error and
// counts; client sessions and streams; the catalogue with what was withheld
// and why), served by Handler as a small server-rendered HTML page or, for
// Accept: application/json, as JSON; Fetch and Write show it in a terminal
// (vmcp status). The page has no JavaScript.
package status

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
)

// Report is one snapshot of a running vmcp, as GET /status shows it.
type Report struct {
	Name    string    `json:"name"`    // serverInfo.name (config name)
	Version string    `json:"version"` // vmcp's version
	Ready   bool      `json:"ready"`   // as /readyz: a backend is connected (and Redis, in a cluster)
	Time    time.Time `json:"time"`    // when the snapshot was taken (the page rendered)
	// ReadySince is when the longest-ready backend among those ready now
	// became ready (zero while not ready).
	ReadySince    time.Time `json:"readySince,omitzero"`
	Started       time.Time `json:"started"`          // when this vmcp process started serving
	UptimeSeconds int64     `json:"uptimeSeconds"`    // Time − Started
	Config        string    `json:"config,omitempty"` // the config file served ("" when embedded)
	Rates         Rates     `json:"rates"`
	Backends      []Backend `json:"backends"`
	Sessions      Sessions  `json:"sessions"`
	Catalogue     Catalogue `json:"catalogue"`
	// Reloads are the most recent configuration reloads, newest first.
	Reloads []Reload `json:"reloads,omitempty"`
}

// Reload is one configuration reload (SIGHUP, a change of the config
// file, or Server.Reload).
type Reload struct {
	Time    time.Time `json:"time"`
	Source  string    `json:"source"`  // SIGHUP | file | api
	Outcome string    `json:"outcome"` // ok | invalid (rejected, the running config kept) | partial (keys left as they were)
	Added   []string  `json:"added,omitempty"`
	Removed []string  `json:"removed,omitempty"`
	Changed []string  `json:"changed,omitempty"`
	// Applied are the other top-level keys whose change took effect
	// (rate_limits).
	Applied []string `json:"applied,omitempty"`
	// Errors are the file:line problems of a rejected config; Ignored the
	// keys that cannot change while vmcp runs (left as they were).
	Errors  []string `json:"errors,omitempty"`
	Ignored []string `json:"ignored,omitempty"`
}

// Backend is one configured backend's row.
type Backend struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`           // streamable-http | sse | stdio
	Revision  string `json:"revision,omitempty"`  // protocol version negotiated by the control connection
	State     string `json:"state"`               // connecting | ready | down
	LastError string `json:"lastError,omitempty"` // the most recent failure, kept after recovery
	// LastErrorAt, Since (the last state change), Restarts and LastRestart
	// (the control connection ready again after its first time; for stdio,
	// a new process) tell what happened since vmcp started.
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	Since       time.Time `json:"since,omitzero"`
	Restarts    int       `json:"restarts"`
	LastRestart time.Time `json:"lastRestart,omitzero"`
	// Tools, Prompts and Resources count the items of this backend that the
	// catalogue advertises (after conflict resolution).
	Tools     int `json:"tools"`
	Prompts   int `json:"prompts"`
	Resources int `json:"resources"`
	// Outbound is the backend's own-token counts (nil: it has no auth).
	Outbound *Outbound `json:"outbound,omitempty"`
}

// Outbound is one backend's outbound identity: its auth type and token
// requests by outcome since start (no per-user figures, never a token).
type Outbound struct {
	Type     string `json:"type"`     // token_exchange | client_credentials
	Issued   uint64 `json:"issued"`   // tokens the endpoint issued
	Refused  uint64 `json:"refused"`  // OAuth error answers
	Failed   uint64 `json:"failed"`   // no usable answer
	Rejected uint64 `json:"rejected"` // backend 401s to an issued token
	// RefusedCached counts requests failed by a refusal kept from the
	// last 10 s, without asking the endpoint again.
	RefusedCached uint64 `json:"refusedCached"`
}

// String is o as one line: "token_exchange: 3 issued, 1 refused, 0 failed, 0 rejected".
func (o *Outbound) String() string {
	return fmt.Sprintf("%s: %d issued, %d refused, %d failed, %d rejected", o.Type, o.Issued, o.Refused, o.Failed, o.Rejected)
}

// Sessions counts what clients hold open.
type Sessions struct {
	Legacy        int `json:"legacy"`        // live Legacy (Mcp-Session-Id) client sessions on this node
	ModernListens int `json:"modernListens"` // open subscriptions/listen streams
	ParkedCalls   int `json:"parkedCalls"`   // backend calls parked for an MRTR retry
	// List is the newest Legacy sessions (at most 100; Legacy counts all).
	List []Session `json:"list"`
}

// Session is one live Legacy client session. ID is a prefix of its
// Mcp-Session-Id, never the whole id; Principal is the token's subject
// (empty without auth).
type Session struct {
	ID              string    `json:"id"`
	Client          string    `json:"client,omitempty"`
	ClientVersion   string    `json:"clientVersion,omitempty"`
	Revision        string    `json:"revision"`
	Principal       string    `json:"principal,omitempty"`
	Created         time.Time `json:"created"`
	AgeSeconds      int64     `json:"ageSeconds"`
	IdleSeconds     int64     `json:"idleSeconds"` // since its last request began
	BackendSessions int       `json:"backendSessions"`
}

// Catalogue summarises the merged lists.
type Catalogue struct {
	Tools     int `json:"tools"`
	Prompts   int `json:"prompts"`
	Resources int `json:"resources"`
	Templates int `json:"resourceTemplates"`
	// Withheld explains each tool or prompt name withheld from every
	// backend because it still collides after conflict resolution.
	Withheld []string `json:"withheld,omitempty"`
	// Conflicts are resource URIs and templates offered twice (resolved
	// by order), duplicate items within one backend, invalid templates.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// ToolChanges are backend tools whose definition differs from the one
	// pinned (security.tool_changes), until accepted (vmcp
	// accept-tool-change, or a load bringing a new accept_tool_changes
	// entry; one a reload keeps accepts nothing again) or reverted.
	ToolChanges []ToolChange `json:"toolChanges,omitempty"`
}

// ToolChange is one tool whose offered definition is not its pin: Pinned
// and Offered are the definitions' SHA-256 hashes (hex); Outcome is
// "warned" (listed) or "denied" (withheld until accepted).
type ToolChange struct {
	Backend string `json:"backend"`
	// Principal is the tag of the principal whose own view of a
	// per-principal backend changed ("": a shared backend).
	Principal string    `json:"principal,omitempty"`
	Tool      string    `json:"tool"` // the backend's own name
	Outcome   string    `json:"outcome"`
	Pinned    string    `json:"pinned"`
	Offered   string    `json:"offered"`
	Since     time.Time `json:"since"`
}

// Conflict is one conflict resolved by order: Winner keeps Key; Loser's
// copy is not advertised (Winner == Loser: a duplicate in one backend's
// list; empty Winner: an invalid template of Loser, ignored).
type Conflict struct {
	Kind   string `json:"kind"`
	Key    string `json:"key"`
	Winner string `json:"winner,omitempty"`
	Loser  string `json:"loser"`
}

// Handler serves report(): JSON when the request's Accept header names
// application/json (and not text/html), else the HTML page. Responses are
// not cached and the page may load nothing (Content-Security-Policy).
// Mount it for GET; the caller applies the Host/Origin rules.
func Handler(report func() Report) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep := report()
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if wantsJSON(r.Header.Get("Accept")) {
			h.Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep) // a failed write is the client gone
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		if err := page.Execute(w, rep); err != nil {
			// Execute fails only on a write error (the template is fixed
			// and checked by the tests): nothing more can reach the client.
			return
		}
	})
}

// wantsJSON reports whether an Accept header asks for JSON rather than
// HTML: it names application/json (with q > 0) and not text/html.
func wantsJSON(accept string) bool {
	var js, html bool
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		switch mt {
		case "application/json":
			js = true
		case "text/html":
			html = true
		}
	}
	return js && !html
}
