package modern

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/wire"
)

// removed are the methods 2026-07-28 removed; a Modern request for one gets
// -32601 (HTTP 404), as the SDK server answers.
var removed = map[string]bool{
	"initialize":            true,
	"ping":                  true,
	"logging/setLevel":      true,
	"resources/subscribe":   true,
	"resources/unsubscribe": true,
}

// lookup returns the method table entry of a request, or -32601.
func lookup(name string) (*method, *jsonrpc.Error) {
	if m, ok := methods[name]; ok {
		return m, nil
	}
	if removed[name] {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s is not supported in protocol %s", wire.Quote(name), FirstVersion)}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %s not found", wire.Quote(name))}
}

// validate checks Mcp-Method, decodes the params of a known method once,
// then checks the _meta protocol version (-32602 missing, -32020 unlike the
// header, -32022 unsupported), the client capabilities (-32602), Mcp-Name
// and Mcp-Param-* (-32020): the SDK server's checks, cheapest first.
func (d *Dispatcher) validate(rq *request, m *method) (mcp.Params, *jsonrpc.Error) {
	if jerr := checkMethodHeader(rq); jerr != nil {
		return nil, jerr
	}
	p, err := m.decode(rq.params)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params for %s: %v", rq.method, err)}
	}
	name := ""
	if m.name != nil {
		name = m.name(p)
	}
	// The endpoint's span takes the _meta's traceparent (and tracestate,
	// baggage) as parent when the request had no traceparent header.
	d.opts.Exchanges.Lookup(rq.r.Header).Observe(rq.method, name, p.GetMeta())
	if jerr := d.checkMeta(rq, p.GetMeta()); jerr != nil {
		return nil, jerr
	}
	if m.name != nil {
		if jerr := checkNameHeader(rq, name); jerr != nil {
			return nil, jerr
		}
	}
	if tc, ok := p.(*callParams); ok {
		if tool, _, found := d.agg.For(identity.From(rq.r.Context()).Key()).Tool(tc.Name); found {
			if jerr := checkParamHeaders(rq, tool, tc.Arguments); jerr != nil {
				return nil, jerr
			}
		}
	}
	return p, nil
}

// checkMeta validates the per-request _meta of 2026-07-28 and keeps the
// client's capabilities on rq.
func (d *Dispatcher) checkMeta(rq *request, meta map[string]any) *jsonrpc.Error {
	v, ok := meta[mcp.MetaKeyProtocolVersion].(string)
	if !ok || v == "" {
		return missingMeta(mcp.MetaKeyProtocolVersion)
	}
	if v != rq.version {
		return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: fmt.Sprintf("%s header %s does not match request _meta %s %s", headerVersion, wire.Quote(rq.version), mcp.MetaKeyProtocolVersion, wire.Quote(v))}
	}
	if !slices.Contains(d.modern, v) {
		data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: d.versions, Requested: v})
		return &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: fmt.Sprintf("unsupported protocol version %s", wire.Quote(v)), Data: data}
	}
	caps := meta[mcp.MetaKeyClientCapabilities]
	if !isObject(caps) {
		return missingMeta(mcp.MetaKeyClientCapabilities)
	}
	if info, present := meta[mcp.MetaKeyClientInfo]; present {
		if !isObject(info) {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid _meta field %q: must be an object", mcp.MetaKeyClientInfo)}
		}
	}
	if err := checkMetaValues(meta); err != nil {
		return err
	}
	rq.clientCaps = caps
	return nil
}

// checkMetaValues refuses (-32602) a logLevel that is not one of the
// RFC 5424 levels and a progressToken that is neither a string nor a
// number (2026-07-28 _meta).
func checkMetaValues(meta map[string]any) *jsonrpc.Error {
	if lv, present := meta[mcp.MetaKeyLogLevel]; present {
		if s, ok := lv.(string); !ok || !slices.Contains(logLevels, mcp.LoggingLevel(s)) {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid _meta field %q: want one of %v", mcp.MetaKeyLogLevel, logLevels)}
		}
	}
	if tok, present := meta["progressToken"]; present {
		switch tok.(type) {
		case nil, string, float64, json.Number, int, int64: // null: no token, as absent
		default:
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `invalid _meta field "progressToken": want a string or a number`}
		}
	}
	return nil
}

func missingMeta(key string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("missing or invalid _meta field %q (required in protocol %s)", key, FirstVersion)}
}

// checkMethodHeader requires Mcp-Method to equal the body's method.
func checkMethodHeader(rq *request) *jsonrpc.Error {
	h := rq.r.Header.Get(headerMethod)
	switch {
	case h == "":
		return mismatch("missing required Mcp-Method header")
	case h != rq.method:
		return mismatch(fmt.Sprintf("header mismatch: Mcp-Method header value %s does not match body method %s", wire.Quote(h), wire.Quote(rq.method)))
	}
	return nil
}

// checkNameHeader requires Mcp-Name (plain or =?base64?…?= encoded) to
// equal params.name (tools/call, prompts/get) or params.uri (resources/read).
func checkNameHeader(rq *request, body string) *jsonrpc.Error {
	h := rq.r.Header.Get(headerName)
	if h == "" {
		return mismatch(fmt.Sprintf("missing required Mcp-Name header for method %s", wire.Quote(rq.method)))
	}
	if h == body {
		return nil
	}
	if v, ok := decodeHeaderValue(h); ok && v == body {
		return nil
	}
	return mismatch(fmt.Sprintf("header mismatch: Mcp-Name header value %s does not match body value %s", wire.Quote(h), wire.Quote(body)))
}

func mismatch(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: msg}
}

// decodeHeaderValue decodes the =?base64?…?= form of an MCP header value
// (SEP-2243); any other value is literal. ok is false for bad Base64.
func decodeHeaderValue(h string) (string, bool) {
	enc, ok := strings.CutPrefix(h, "=?base64?")
	if !ok {
		return h, true
	}
	if enc, ok = strings.CutSuffix(enc, "?="); !ok {
		return h, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}
