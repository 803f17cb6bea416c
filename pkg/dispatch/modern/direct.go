package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
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

var errResultNotObject = errors.New("result is not a JSON object")

// rewriteResult returns a backend's raw result object as vmcp answers it:
// "_meta" keeps the backend's keys except the per-hop
// io.modelcontextprotocol/* ones and gains vmcp's serverInfo; a missing
// "resultType" becomes "complete"; every other member is copied unchanged.
func (d *Dispatcher) rewriteResult(raw json.RawMessage) ([]byte, error) {
	out := make([]byte, 1, len(raw)+len(d.info)+64)
	out[0] = '{'
	var metaVal []byte
	hasType := false
	err := eachMember(raw, func(key, member []byte) {
		switch {
		case keyIs(key, "_meta"):
			metaVal = member[len(key):]
			return
		case keyIs(key, "resultType"):
			hasType = true
		}
		out = append(out, member...)
		out = append(out, ',')
	})
	if err != nil {
		return nil, err
	}
	out = append(out, `"_meta":{`...)
	if v := metaVal[skipSpace(metaVal, skipColon(metaVal)):]; len(v) > 0 && v[0] == '{' {
		if err := eachMember(v, func(key, member []byte) {
			if !reservedKey(key) {
				out = append(out, member...)
				out = append(out, ',')
			}
		}); err != nil {
			return nil, err
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

// eachMember calls f for every member of the JSON object obj (valid JSON,
// as decoded by encoding/json) with its raw key token and the raw member
// text from the key through the value.
func eachMember(obj []byte, f func(key, member []byte)) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errResultNotObject
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		start := i
		keyEnd, err := skipValue(obj, i)
		if err != nil || obj[start] != '"' {
			return errResultNotObject
		}
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return errResultNotObject
		}
		end, err := skipValue(obj, skipSpace(obj, i+1))
		if err != nil {
			return err
		}
		f(obj[start:keyEnd], obj[start:end])
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
			continue
		}
		if i < len(obj) && obj[i] == '}' {
			return nil
		}
		return errResultNotObject
	}
	return errResultNotObject
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errResultNotObject
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, errResultNotObject
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errResultNotObject
	}
	j := i
scan:
	for ; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break scan
		}
	}
	if j == i {
		return 0, errResultNotObject
	}
	return j, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipColon returns the index just past the ':' that starts b (a member's
// text after its key), or 0 if there is none.
func skipColon(b []byte) int {
	i := skipSpace(b, 0)
	if i < len(b) && b[i] == ':' {
		return i + 1
	}
	return 0
}

// keyIs reports whether the raw key token names key.
func keyIs(tok []byte, key string) bool {
	if len(tok) == len(key)+2 && string(tok[1:len(tok)-1]) == key {
		return true
	}
	return bytes.IndexByte(tok, '\\') >= 0 && unquoteKey(tok) == key
}

// reservedKey reports whether a raw _meta key token is a per-hop
// io.modelcontextprotocol/* key.
func reservedKey(tok []byte) bool {
	const prefix = "io.modelcontextprotocol/"
	if bytes.IndexByte(tok, '\\') < 0 {
		return len(tok) > len(prefix) && string(tok[1:1+len(prefix)]) == prefix
	}
	return strings.HasPrefix(unquoteKey(tok), prefix)
}

// unquoteKey decodes a raw key token (escapes are rare in keys).
func unquoteKey(tok []byte) string {
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	_ = json.Unmarshal(tok, &s)
	return s
}
