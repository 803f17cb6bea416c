package backends

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A Legacy client's call relayed to a Modern backend (a stateless one,
// which keeps no Legacy session): the request carries in its _meta what a
// Legacy session would have held (2026-07-28: protocolVersion,
// clientCapabilities, clientInfo, logLevel), and the result loses what a
// Legacy client has no use for (resultType, the backend's per-hop
// io.modelcontextprotocol/* _meta keys).

// errMetaNotObject refuses a relayed request whose _meta is not an object.
var errMetaNotObject = errors.New("params._meta is not an object")

// RequestMeta returns a relayed request's raw _meta (already ForwardMetaRaw's:
// no io.modelcontextprotocol/* keys; nil for none) as the session's
// revision wants it: unchanged at a Legacy revision; at a Modern one with
// protocolVersion, vmcp's clientInfo, the client's clientCapabilities
// (caps, raw JSON) and logLevel ("" for none) added. A null _meta is none
// (as a go-sdk server takes it); one that is not an object fails with an
// error naming it.
func (r *RawSession) RequestMeta(meta, caps json.RawMessage, logLevel string) (json.RawMessage, error) {
	if !r.modern {
		return meta, nil
	}
	return modernMeta(r.b, r.version, meta, caps, logLevel)
}

// modernMeta is a request's _meta for b at the Modern revision version.
func modernMeta(b *Backend, version string, meta, caps json.RawMessage, logLevel string) (json.RawMessage, error) {
	out := make([]byte, 0, len(meta)+len(caps)+192)
	out = append(out, '{')
	if t := bytes.TrimSpace(meta); len(t) > 0 && string(t) != "null" {
		if t[0] != '{' || !json.Valid(t) {
			return nil, errMetaNotObject
		}
		if inner := bytes.TrimSpace(t[1 : len(t)-1]); len(inner) > 0 {
			out = append(append(out, inner...), ',')
		}
	}
	out = mcpmsg.AppendMember(out, mcp.MetaKeyProtocolVersion, wire.AppendString(nil, version))
	out = mcpmsg.AppendMember(append(out, ','), mcp.MetaKeyClientCapabilities, caps)
	info := wire.AppendString(append(wire.AppendString([]byte(`{"name":`), b.info.Name), `,"version":`...), b.info.Version)
	out = mcpmsg.AppendMember(append(out, ','), mcp.MetaKeyClientInfo, append(info, '}'))
	if logLevel != "" {
		out = mcpmsg.AppendMember(append(out, ','), mcp.MetaKeyLogLevel, wire.AppendString(nil, logLevel))
	}
	return append(out, '}'), nil
}
