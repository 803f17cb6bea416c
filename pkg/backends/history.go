package backends

import (
	"time"

	"github.com/vmcp/vmcp/pkg/outbound"
)

// History is what an operator asks of a backend after an incident: since
// when it is in its state, its last error even once it recovered, and how
// often its control connection came back (for stdio, a new process).
type History struct {
	Since       time.Time `json:"since,omitzero"`       // the last state change
	LastError   string    `json:"lastError,omitempty"`  // the most recent failure, kept after recovery
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"` // when LastError happened
	Restarts    int       `json:"restarts"`             // times it became ready again after its first
	LastRestart time.Time `json:"lastRestart,omitzero"` // when it last did
	up          bool      // it was ready once: a later ready is a restart
}

// record notes a state change to s at now (err: its cause, if any).
// Requires the backend's mu.
func (h *History) record(s State, changed bool, err error, now time.Time) {
	if err != nil {
		h.LastError, h.LastErrorAt = err.Error(), now
	}
	if !changed {
		return
	}
	h.Since = now
	if s == StateReady && h.up {
		h.Restarts++
		h.LastRestart = now
	}
	h.up = h.up || s == StateReady
}

// Status is one backend's health, as listed in /readyz.
type Status struct {
	Name            string `json:"name"`
	State           State  `json:"state"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	Error           string `json:"error,omitempty"`
	Tools           int    `json:"tools"`
	// Outbound is the backend's own-token counts (nil: no auth).
	Outbound *outbound.Stats `json:"outbound,omitempty"`
	History
}
