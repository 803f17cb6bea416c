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
func (d *Dispatcher) callToolDirect(ctx context.Context, rq *request, t upstream.Target, p *callParams) ([]byte, error) {
	version, ok := t.Backend.DirectVersion()
	if !ok {
		return nil, fmt.Errorf("%w (no Modern control connection)", backends.ErrBackendDown)
	}
	params, err := directParams(ctx, rq, t, p, version)
	if err != nil {
		return nil, err
	}
	raw, err := t.Backend.Direct(ctx, version, backends.DirectRequest{Method: "tools/call", Name: t.Name, RawParams: params, Sink: rq.stream.sink()})
	if err != nil {
		return nil, err
	}
	return d.rewriteResult(raw)
}

// directParams are p's params as t's backend gets them, as JSON built from
// the client's raw _meta (no value encoded again): its keys but the
// per-hop io.modelcontextprotocol/* ones, the client's clientCapabilities,
// the progress token minted for the call in place of the client's, the
// client's logLevel, vmcp's protocolVersion and clientInfo; then the
// backend's tool name, the arguments ({} if absent), inputResponses and
// the backend's requestState.
func directParams(ctx context.Context, rq *request, t upstream.Target, p *callParams, version string) (json.RawMessage, error) {
	caps := objectJSON(rq.clientCaps)
	out := make([]byte, 0, 160+len(p.rawMeta)+len(caps)+len(t.Name)+len(p.Arguments)+len(p.RequestState))
	out = append(out, `{"_meta":`...)
	mark := len(out)
	out = append(out, '{')
	out, err := appendClientMeta(out, p.rawMeta, rq.stream.minted != "")
	if err != nil {
		return nil, err
	}
	out = append(append(out, `"`+mcp.MetaKeyClientCapabilities+`":`...), caps...)
	out = rq.stream.appendBackendMeta(out)
	out = append(t.Backend.AppendRequestMeta(append(out, ','), version), '}')
	if bytes.Contains(out[mark:], []byte("traceparent")) {
		// a client's _meta.traceparent names vmcp's backend span instead
		out = append(out[:mark], tracing.RewriteMetaRaw(ctx, out[mark:])...)
	}
	out = wire.AppendString(append(out, `,"name":`...), t.Name)
	args := p.Arguments
	if len(args) == 0 {
		args = emptyObject
	}
	out = append(append(out, `,"arguments":`...), args...)
	if len(p.InputResponses) > 0 {
		in, err := json.Marshal(p.InputResponses)
		if err != nil {
			return nil, fmt.Errorf("encoding inputResponses: %w", err)
		}
		out = append(append(out, `,"inputResponses":`...), in...)
	}
	if p.RequestState != "" {
		out = wire.AppendString(append(out, `,"requestState":`...), p.RequestState)
	}
	return append(out, '}'), nil
}

// appendClientMeta appends each member of the client's raw _meta the
// backend may see, each followed by a comma: not the per-hop
// io.modelcontextprotocol/* keys, nor progressToken when vmcp minted one.
func appendClientMeta(out []byte, meta json.RawMessage, minted bool) ([]byte, error) {
	if len(meta) == 0 {
		return out, nil
	}
	err := wire.EachMember(meta, func(key, _, member []byte) {
		if reservedKey(key) || (minted && wire.KeyIs(key, "progressToken")) {
			return
		}
		out = append(append(out, member...), ',')
	})
	if err != nil {
		return nil, fmt.Errorf("request _meta: %w", err)
	}
	return out, nil
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
