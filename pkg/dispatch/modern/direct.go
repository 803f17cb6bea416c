package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// callToolDirect forwards a tools/call the core routes ViaDirect (a Modern
// streamable HTTP backend, a tool without Mcp-Param-* bindings) with one
// direct POST (backends.Backend.Direct) instead of the SDK client, and
// rewrites the backend's raw result: its reserved _meta keys replaced by
// vmcp's serverInfo, resultType added if absent, everything else byte for
// byte. ctx is the call core's (timeout, cancellation, forwarded headers).
func (d *Dispatcher) callToolDirect(ctx context.Context, rq *request, t upstream.Target, p *mcp.CallToolParamsRaw) ([]byte, error) {
	version, ok := t.Backend.DirectVersion()
	if !ok {
		return nil, fmt.Errorf("%w (no Modern control connection)", backends.ErrBackendDown)
	}
	meta := backends.ForwardMeta(p.Meta)
	if meta == nil {
		meta = make(mcp.Meta, 3) // Direct adds protocolVersion and clientInfo
	}
	meta[mcp.MetaKeyClientCapabilities] = rq.clientCaps
	meta = rq.stream.backendMeta(meta, true)
	tracing.RewriteMeta(ctx, meta) // a client's _meta.traceparent names vmcp's backend span instead
	params := &mcp.CallToolParams{
		Meta:           meta,
		Name:           t.Name,
		Arguments:      emptyObject,
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
	}
	if len(p.Arguments) > 0 {
		params.Arguments = p.Arguments
	}
	raw, err := t.Backend.Direct(ctx, version, backends.DirectRequest{Method: "tools/call", Name: t.Name, Params: params, Sink: rq.stream.sink()})
	if err != nil {
		return nil, err
	}
	return d.rewriteResult(raw)
}

// emptyObject is sent for absent arguments, as the SDK client does.
var emptyObject = json.RawMessage(`{}`)

// rewriteResult returns a backend's raw result object as vmcp answers it:
// "_meta" keeps the backend's keys except the per-hop
// io.modelcontextprotocol/* ones and gains vmcp's serverInfo; a missing
// "resultType" becomes "complete"; every other member is copied unchanged.
func (d *Dispatcher) rewriteResult(raw json.RawMessage) ([]byte, error) {
	out := make([]byte, 1, len(raw)+len(d.info)+64)
	out[0] = '{'
	var metaVal []byte
	hasType := false
	err := wire.EachMember(raw, func(key, value, member []byte) {
		switch {
		case wire.KeyIs(key, "_meta"):
			metaVal = value
			return
		case wire.KeyIs(key, "resultType"):
			hasType = true
		}
		out = append(out, member...)
		out = append(out, ',')
	})
	if err != nil {
		return nil, fmt.Errorf("backend result: %w", err)
	}
	out = append(out, `"_meta":{`...)
	if len(metaVal) > 0 && metaVal[0] == '{' {
		if err := wire.EachMember(metaVal, func(key, _, member []byte) {
			if !reservedKey(key) {
				out = append(out, member...)
				out = append(out, ',')
			}
		}); err != nil {
			return nil, fmt.Errorf("backend result _meta: %w", err)
		}
	}
	out = append(out, `"`+mcp.MetaKeyServerInfo+`":`...)
	out = append(out, d.info...)
	out = append(out, '}')
	if !hasType {
		out = append(out, `,"resultType":"complete"`...)
	}
	return append(out, '}'), nil
}

// reservedKey reports whether a raw _meta key token is a per-hop
// io.modelcontextprotocol/* key.
func reservedKey(tok []byte) bool {
	const prefix = "io.modelcontextprotocol/"
	if bytes.IndexByte(tok, '\\') < 0 {
		return len(tok) > len(prefix) && string(tok[1:1+len(prefix)]) == prefix
	}
	return strings.HasPrefix(wire.UnquoteKey(tok), prefix)
}
