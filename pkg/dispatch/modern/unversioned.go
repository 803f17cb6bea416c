package modern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaVersionKey is how a Modern request body spells its version key.
var metaVersionKey = []byte(`"` + mcp.MetaKeyProtocolVersion + `"`)

// InterceptModernBody is called for a POST that the router sends to the
// Legacy handler (MCP-Protocol-Version absent or older than FirstVersion).
// If the body is a Modern request nonetheless (its _meta protocolVersion
// is FirstVersion or later), it answers 400 + -32020 (header missing or
// unlike _meta, 2026-07-28 Streamable HTTP) and returns true. Otherwise it
// restores r.Body for the Legacy handler and returns false; it answers 413
// itself, and returns true, for a body over MaxBodyBytes.
func (d *Dispatcher) InterceptModernBody(w http.ResponseWriter, r *http.Request) bool {
	body, ok := readBody(w, r, d.opts.MaxBodyBytes)
	if !ok {
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
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
	if v < FirstVersion {
		return false
	}
	h := r.Header.Get(headerVersion)
	msg := fmt.Sprintf("%s header is required for requests carrying %q", headerVersion, mcp.MetaKeyProtocolVersion)
	if h != "" {
		msg = fmt.Sprintf("%s header %q does not match request _meta %s %q", headerVersion, h, mcp.MetaKeyProtocolVersion, v)
	}
	writeError(w, http.StatusBadRequest, env.ID, mismatch(msg))
	return true
}
