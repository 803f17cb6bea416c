package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// callToolDirect sends a tools/call the core routes ViaDirect (a Modern
// streamable HTTP backend; Do builds the Mcp-Param-* headers of a tool
// that mirrors arguments in them, and carries a per-principal backend's
// token for the request's principal) through
// the call core's one sender (upstream.Core.Do): the progress and logs the
// backend sends during the call go to the client's stream as they are
// read, one at a time (the Stream's bounded queue stalls the backend when
// the client is slow), and the backend's raw result is rewritten: its
// reserved _meta keys replaced by vmcp's serverInfo, resultType added if
// absent, everything else byte for byte. p.RequestState is the backend's.
func (d *Dispatcher) callToolDirect(rq *request, req *upstream.Request, t upstream.Target, p *callParams) ([]byte, error) {
	meta, params, err := directParams(rq, t, p)
	if err != nil {
		return nil, err
	}
	dreq := *req
	dreq.Target, dreq.Meta, dreq.Params = &t, meta, params
	dreq.Caps, dreq.LogLevel = objectJSON(rq.clientCaps), rq.stream.level()
	st, err := d.core.Do(rq.r.Context(), &dreq)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for {
		m, err := st.Next(context.Background()) // the stream ends with the client's request (Do's ctx)
		switch {
		case err != nil:
			return nil, err
		case m.Kind == upstream.KindResult:
			return d.rewriteResult(m.Result)
		case m.Kind == upstream.KindAsk:
			rq.stream.undeliverable(m.Method, errors.New("a 2026-07-28 backend sent a request on a request stream"))
		default:
			rq.stream.Notify(m.Method, m.Params)
		}
	}
}

// directParams are p's _meta members and params as t's backend gets them,
// as JSON built from the client's raw _meta (no value encoded again): its
// keys but the per-hop io.modelcontextprotocol/* ones, and the progress
// token minted for the call in place of the client's (the call core adds
// the per-hop keys); then the backend's tool name, the arguments ({} if
// absent), inputResponses and the backend's requestState.
func directParams(rq *request, t upstream.Target, p *callParams) (meta, params json.RawMessage, err error) {
	m := make([]byte, 0, 32+len(p.rawMeta))
	m = append(m, '{')
	if m, err = appendClientMeta(m, p.rawMeta, rq.stream.minted != ""); err != nil {
		return nil, nil, err
	}
	if rq.stream.minted != "" {
		m = wire.AppendString(append(m, `"progressToken":`...), rq.stream.minted)
	} else if len(m) > 1 {
		m = m[:len(m)-1] // the last member's comma
	}
	meta = append(m, '}')
	out := make([]byte, 0, 64+len(t.Name)+len(p.Arguments)+len(p.RequestState))
	out = wire.AppendString(append(out, `{"name":`...), t.Name)
	args := p.Arguments
	if len(args) == 0 {
		args = emptyObject
	}
	out = append(append(out, `,"arguments":`...), args...)
	if len(p.InputResponses) > 0 {
		in, err := json.Marshal(p.InputResponses)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding inputResponses: %w", err)
		}
		out = append(append(out, `,"inputResponses":`...), in...)
	}
	if p.RequestState != "" {
		out = wire.AppendString(append(out, `,"requestState":`...), p.RequestState)
	}
	return meta, append(out, '}'), nil
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
