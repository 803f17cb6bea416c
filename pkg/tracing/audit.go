package tracing

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/audit"
)

// Decide reports what vmcp decided on the request (an authorization rule,
// a rate limit), for the audit log; a denial is kept over later reports.
func (x *Exchange) Decide(d audit.Decision) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended && !x.decision.Denied {
		x.decision = d
	}
}

// clientInfo is the clientInfo a request's _meta carries (2026-07-28:
// io.modelcontextprotocol/clientInfo, decoded or still raw), nil if none.
func clientInfo(meta map[string]any) *audit.Client {
	var c audit.Client
	switch v := meta[mcp.MetaKeyClientInfo].(type) {
	case map[string]any:
		c.Name, _ = v["name"].(string)
		c.Version, _ = v["version"].(string)
	case json.RawMessage:
		if json.Unmarshal(v, &c) != nil {
			return nil
		}
	default:
		return nil
	}
	return &c
}

// Admit reports that the request passed authentication (or needed none),
// speaking for p: the audit log's principal.
func (x *Exchange) Admit(p audit.Principal) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended {
		x.principal = &p
	}
}
