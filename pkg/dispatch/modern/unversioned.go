package modern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// metaVersionKey is how a Modern request body spells its version key.
var metaVersionKey = []byte(`"` + mcp.MetaKeyProtocolVersion + `"`)

// InterceptModernBody screens a POST bound for the Legacy handler (its
// MCP-Protocol-Version is absent or older than FirstVersion). A Modern body
// (_meta protocolVersion >= FirstVersion) gets 400 + -32020, an oversized
// one 413, and it returns true; otherwise it leaves r.Body read and returns
// false. Only the key's presence is scanned for, so the common case is cheap.
func (d *Dispatcher) InterceptModernBody(w http.ResponseWriter, r *http.Request) bool {
	body, ok := readBody(w, r, d.opts.MaxBodyBytes) // left on r.Body for the Legacy handler
	if !ok {
		return true
	}
	if !bytes.Contains(body, metaVersionKey) {
		return false
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &env) != nil || !validID(env.ID) {
		return false
	}
	v, _ := env.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	if !wire.IsModern(v) {
		return false
	}
	h := r.Header.Get(headerVersion)
	msg := fmt.Sprintf("%s header is required for requests carrying %q", headerVersion, mcp.MetaKeyProtocolVersion)
	if h != "" {
		msg = fmt.Sprintf("%s header %s does not match request _meta %s %s", headerVersion, wire.Quote(h), mcp.MetaKeyProtocolVersion, wire.Quote(v))
	}
	writeError(w, http.StatusBadRequest, env.ID, mismatch(msg))
	return true
}

// validID reports whether raw is a valid JSON-RPC request id (wire.IDKey).
func validID(raw json.RawMessage) bool {
	_, ok := wire.IDKey(raw)
	return ok
}
