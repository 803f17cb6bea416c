package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Direct calls: a request to a Modern (2026-07-28+) streamable HTTP backend
// is self-contained (no session, no server-to-client requests: 2026-07-28
// uses MRTR results instead), so vmcp can send it as one POST and take the
// result's raw JSON, instead of going through the SDK client on the shared
// control connection. The SDK client parses each request 3-4 times and the
// response twice to typed values that vmcp then re-encodes; a direct call
// builds the body once and returns the result bytes untouched.

// DirectRequest is one request sent by Backend.Direct.
type DirectRequest struct {
	Method string // JSON-RPC method, also sent as Mcp-Method
	Name   string // Mcp-Name (params.name or params.uri); "" for none
	// Params are the request's params. Their _meta must already hold what
	// the backend may see of the client's (ForwardMeta) and the client's
	// clientCapabilities; Direct adds protocolVersion and clientInfo as the
	// SDK client does.
	Params mcp.Params
	// RawParams, used when Params is nil, are the params as JSON, sent byte
	// for byte: their _meta must be complete (AppendRequestMeta adds
	// protocolVersion and clientInfo).
	RawParams json.RawMessage
}

// DirectVersion reports whether b's requests can be sent with Direct: the
// control connection is up (or b is per-principal and a session learned
// its revision), over streamable HTTP, at a Modern revision.
func (b *Backend) DirectVersion() (string, bool) {
	if b.cfg.Transport != config.TransportStreamableHTTP && b.cfg.Transport != "" {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	up := (b.state == StateReady && b.control != nil) || b.state == StatePerPrincipal
	if !up || b.init == nil || !wire.IsModern(b.init.ProtocolVersion) {
		return "", false
	}
	return b.init.ProtocolVersion, true
}

// Direct sends req to b as one POST (b must report DirectVersion) and
// returns the raw JSON of its result. A JSON-RPC error from the backend is
// returned as a *jsonrpc.Error; a transport failure also asks the
// supervisor to re-check the backend.
func (b *Backend) Direct(ctx context.Context, version string, req DirectRequest) (json.RawMessage, error) {
	params, err := b.directParams(version, req)
	if err != nil {
		return nil, err
	}
	id := b.ids.direct.Add(1)
	body := wire.Request(strconv.AppendInt(nil, id, 10), req.Method, params)

	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := hr.Header
	h["Content-Type"] = jsonContentType
	h["Accept"] = acceptBoth
	h["Mcp-Protocol-Version"] = []string{version}
	h["Mcp-Method"] = []string{req.Method}
	if req.Name != "" {
		h["Mcp-Name"] = []string{headerValue(req.Name)}
	}
	resp, err := transport.RoundTrip(b.http, hr)
	if err != nil {
		return nil, b.transportFailure(ctx, err)
	}
	res, err := b.readResponse(resp, id)
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			err = b.transportFailure(ctx, err)
		}
		return nil, err
	}
	if err := mcpmsg.ResultError(b.Name(), req.Method, res); err != nil {
		return nil, err
	}
	return res, nil
}

// directParams are req's params as JSON, with protocolVersion and
// clientInfo added to a decoded _meta that lacks them.
func (b *Backend) directParams(version string, req DirectRequest) (json.RawMessage, error) {
	if req.Params == nil {
		return req.RawParams, nil
	}
	meta := req.Params.GetMeta()
	if meta == nil {
		meta = make(map[string]any, 3)
	}
	if _, ok := meta[mcp.MetaKeyProtocolVersion]; !ok {
		meta[mcp.MetaKeyProtocolVersion] = version
	}
	if _, ok := meta[mcp.MetaKeyClientInfo]; !ok {
		meta[mcp.MetaKeyClientInfo] = b.info
	}
	req.Params.SetMeta(meta)
	params, err := json.Marshal(req.Params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s params: %w", req.Method, err)
	}
	return params, nil
}

// AppendRequestMeta appends to out, a _meta object being built, the
// members a direct request's _meta carries for vmcp as the SDK client
// would: protocolVersion (version) and vmcp's clientInfo.
func (b *Backend) AppendRequestMeta(out []byte, version string) []byte {
	out = wire.AppendString(append(out, `"`+mcp.MetaKeyProtocolVersion+`":`...), version)
	out = wire.AppendString(append(out, `,"`+mcp.MetaKeyClientInfo+`":{"name":`...), b.info.Name)
	out = wire.AppendString(append(out, `,"version":`...), b.info.Version)
	return append(out, '}')
}

var (
	jsonContentType = []string{"application/json"}
	acceptBoth      = []string{wire.AcceptPOST}
)

// transportFailure asks the supervisor to re-check the backend after a
// call failed below JSON-RPC (the SDK client would have failed the control
// connection), unless the caller gave up.
func (b *Backend) transportFailure(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		b.requestRefresh()
	}
	return err
}

// headerValue encodes an MCP header value as SEP-2243 asks: values with
// non-printable or non-ASCII bytes, edge whitespace, or that look encoded
// are sent as =?base64?…?=.
func headerValue(s string) string { return wire.HeaderValue(s) }

// readResponse reads the response to request id from resp (a JSON body or
// an SSE stream) and returns its raw result.
// The body is always consumed to its end (in the background once the
// response is found, so the HTTP connection is reused) and closed.
func (b *Backend) readResponse(resp *http.Response, id int64) (json.RawMessage, error) {
	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if ct == "application/json" {
			if res, err := decodeResponse(b, id, true); err != nil {
				var we *jsonrpc.Error
				if errors.As(err, &we) {
					return res, err
				}
			}
		}
		return nil, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	switch ct {
	case "application/json":
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, transport.MaxResponse+1))
		if err != nil {
			return nil, err
		}
		if len(b) > transport.MaxResponse {
			return nil, fmt.Errorf("response exceeds %d bytes", transport.MaxResponse)
		}
		return decodeResponse(b, id, false)
	case wire.MediaSSE:
		return b.readSSE(resp.Body, id)
	}
	resp.Body.Close()
	return nil, fmt.Errorf("unsupported content type %q (HTTP %d)", ct, resp.StatusCode)
}

// errNotOurs marks a message on the stream that is not the awaited response.
var errNotOurs = errors.New("not the awaited response")

// decodeResponse decodes a JSON-RPC response to id (its result aliases b).
// With anyID, an error response without a matching id (as HTTP error
// bodies may be) counts.
func decodeResponse(b []byte, id int64, anyID bool) (json.RawMessage, error) {
	var m wire.Message
	if err := wire.Decode(b, &m); err != nil {
		return nil, fmt.Errorf("malformed JSON-RPC message: %w", err)
	}
	return responseTo(&m, id, anyID)
}

// responseTo is decodeResponse on a decoded message.
func responseTo(m *wire.Message, id int64, anyID bool) (json.RawMessage, error) {
	if m.Method != "" || (!anyID && string(m.ID) != strconv.FormatInt(id, 10)) {
		return nil, errNotOurs
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		we := new(jsonrpc.Error)
		if err := json.Unmarshal(m.Error, we); err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC message: %w", err)
		}
		return nil, we
	}
	if m.Result == nil {
		if anyID {
			return nil, errNotOurs
		}
		return nil, errors.New("JSON-RPC response has neither result nor error")
	}
	return m.Result, nil
}

// readSSE scans an SSE stream for the response to id (Direct serves
// vmcp's own requests, server/discover: every message before the response
// is undeliverable; clients' requests go through upstream.Core.Do).
func (b *Backend) readSSE(body io.ReadCloser, id int64) (json.RawMessage, error) {
	er := wire.NewEventReader(body)
	defer er.Release() // each event is copied: its message outlives the read
	for {
		data, err := er.Next()
		if err != nil {
			body.Close()
			if errors.Is(err, io.EOF) {
				return nil, errors.New("SSE stream ended without a response")
			}
			return nil, err
		}
		var m wire.Message
		if err := wire.Decode(bytes.Clone(data), &m); err != nil {
			body.Close()
			return nil, fmt.Errorf("malformed JSON-RPC message: %w", err)
		}
		if m.Method != "" {
			b.undeliverable(m.Method, errors.New("on the stream of vmcp's own request"))
			continue
		}
		res, derr := responseTo(&m, id, false)
		if !errors.Is(derr, errNotOurs) {
			if er.Ended() { // the stream ended with the response: nothing to drain
				body.Close()
			} else {
				go drain(body) // the stream ends after the response
			}
			return res, derr
		}
	}
}

// drain reads the rest of a response body so its connection is reused.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, transport.MaxResponse))
	body.Close()
}
