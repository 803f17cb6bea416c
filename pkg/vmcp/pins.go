package vmcp

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/pin"
	"github.com/vmcp/vmcp/pkg/status"
)

// AdminAcceptPath is the admin endpoint vmcp accept-tool-change posts to.
const AdminAcceptPath = "/admin/tool-changes/accept"

// startPins builds tool-definition pinning (security.tool_changes) over
// the cluster's Redis when there is one, counted in
// vmcp_tool_changes_total{backend,outcome}, and puts it in front of the
// aggregator before any inventory arrives; now is its retention's clock
// (nil: time.Now).
func (s *Server) startPins(cfg *config.Config, now func() time.Time) {
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_tool_changes_total",
		Help: "Backend tool definitions seen to differ from their pin, by backend and outcome (warned, denied, allowed, accepted, store_error), and pins deleted (expired, evicted).",
	}, []string{"backend", "outcome"})
	s.metrics.Registry.MustRegister(counter)
	var store pin.Store
	if rdb, prefix, tagged := s.cluster.SharedRedis(); rdb != nil {
		store = pin.NewRedis(rdb, prefix, tagged)
	}
	s.pins = pin.New(pin.Options{Mode: cfg.Security.ToolChanges, Store: store, Log: s.log,
		Counter: counter, OnChange: s.agg.Regate, Now: now})
	sec := cfg.Security
	s.security.Store(&sec)
	s.pins.Configure(sec)
	s.agg.SetGate(s.pins)
}

// applySecurity applies a reloaded security section: the mode, the
// changes it accepts, the admin token.
func (s *Server) applySecurity(sec config.Security) {
	s.security.Store(&sec)
	s.pins.Configure(sec)
}

// AcceptToolChange makes the definition backend now offers for tool (the
// backend's own name) its pin, on every node of a cluster: with
// security.tool_changes deny the tool is listed and callable again. An
// error wraps pin.ErrNoChange when nothing is pending for that tool here.
func (s *Server) AcceptToolChange(backend, tool string) error {
	return s.pins.Accept(backend, tool)
}

// AcceptToolChangeOffered is AcceptToolChange of the definition whose
// hash is offered ("": any); an error wraps pin.ErrOtherOffered when the
// backend offers another one now.
func (s *Server) AcceptToolChangeOffered(backend, tool, offered string) error {
	return s.pins.AcceptOffered(backend, tool, offered)
}

// toolChanges are the pending tool definition changes for /status.
func (s *Server) toolChanges() []status.ToolChange {
	var out []status.ToolChange
	for _, c := range s.pins.Changes() {
		out = append(out, status.ToolChange{Backend: c.Backend, Principal: c.Principal, Tool: c.Tool, Outcome: c.Outcome,
			Pinned: c.Pinned, Offered: c.Offered, Since: c.Since})
	}
	return out
}

// AcceptRequest is the body of POST /admin/tool-changes/accept.
type AcceptRequest struct {
	Backend string `json:"backend"`
	Tool    string `json:"tool"`
	// Offered, if set, is the hash of the definition reviewed (/status's
	// offered): another one offered now is refused with 409.
	Offered string `json:"offered,omitempty"`
}

// adminAccept serves POST AdminAcceptPath: with security.admin_token set,
// a request bearing it (Authorization: Bearer) accepts one tool change
// (200 {"accepted":true,"offered":HASH}, HASH the definition accepted when
// it is one; 404 with an error when none is pending, 409 when another
// definition than the body's offered is, 400 for an offered that is not a
// whole hash); without
// the token configured, 404; a wrong or missing token, 401.
func (s *Server) adminAccept(w http.ResponseWriter, r *http.Request) {
	token := s.security.Load().AdminToken
	if token == "" {
		adminError(w, http.StatusNotFound, "the admin endpoint is off: set security.admin_token")
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="vmcp admin"`)
		adminError(w, http.StatusUnauthorized, "the admin token (security.admin_token) is required")
		return
	}
	var req AcceptRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Backend == "" || req.Tool == "" {
		adminError(w, http.StatusBadRequest, `want a JSON body {"backend": "...", "tool": "..."}`)
		return
	}
	if req.Offered != "" && !config.IsHash(req.Offered) {
		adminError(w, http.StatusBadRequest, "offered: want all 64 lower-case hex digits of the offered hash, as /status shows it")
		return
	}
	offered := cmp.Or(req.Offered, s.pendingOffered(req.Backend, req.Tool)) // accept what was looked up, not one offered since
	if err := s.AcceptToolChangeOffered(req.Backend, req.Tool, offered); err != nil {
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, pin.ErrNoChange):
			code = http.StatusNotFound
		case errors.Is(err, pin.ErrOtherOffered):
			code = http.StatusConflict
		}
		adminError(w, code, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(AcceptResponse{Accepted: true, Offered: offered})
}

// AcceptResponse is the body of a 200 answer to POST
// /admin/tool-changes/accept.
type AcceptResponse struct {
	Accepted bool `json:"accepted"`
	// Offered is the hash of the definition accepted ("" when principals
	// of a per-principal backend had different ones pending).
	Offered string `json:"offered,omitempty"`
}

// pendingOffered is the one definition (hash) pending for backend's tool,
// "" if none or several (principals' own).
func (s *Server) pendingOffered(backend, tool string) string {
	h := ""
	for _, c := range s.pins.Changes() {
		if c.Backend != backend || c.Tool != tool {
			continue
		}
		if h != "" && h != c.Offered {
			return ""
		}
		h = c.Offered
	}
	return h
}

// adminError writes {"error": msg} with code.
func adminError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
