package backends

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Relay: a Legacy client's request can go to its own backend session as
// raw JSON-RPC on the backend's pooled HTTP connections, instead of through
// the go-sdk client (which decodes each message into typed values that vmcp
// then re-encodes). The session is still opened, initialized and closed by
// the go-sdk client; RawSession only posts on it.

// RawSession is one client session's backend session, as far as a raw
// relay needs it: where to POST and the headers that bind a POST to it.
// At a Modern revision (a stateless backend) there is no session to bind
// to: each request carries its own _meta (RequestMeta) and Mcp-Method and
// Mcp-Name headers (Call), and closing its stream cancels it.
type RawSession struct {
	b       *Backend
	broken  func() // told of a transport failure or a 404 (nil: none)
	id      string // backend Mcp-Session-Id; "" for a backend without sessions
	version string // negotiated protocol version
	modern  bool   // version is Modern (2026-07-28+)
	// held is the client session's latest forwarded headers, for posts
	// that carry no client request's own (notifications, answers).
	held func() http.Header
}

// Backend is the backend this session belongs to.
func (r *RawSession) Backend() *Backend { return r.b }

// ID is the backend's Mcp-Session-Id of the session ("" for none).
func (r *RawSession) ID() string { return r.id }

// Stateless is b's RawSession without a session, for a Modern (2026-07-28+)
// streamable HTTP backend whose control connection is up (DirectVersion):
// each request is one self-contained POST with Mcp-Method and Mcp-Name
// headers and its own _meta (RequestMeta); ok is false otherwise.
func (b *Backend) Stateless() (r *RawSession, ok bool) {
	v, ok := b.DirectVersion()
	if !ok {
		return nil, false
	}
	return &RawSession{b: b, version: v, modern: true}, true
}

// Modern reports whether the session speaks a Modern revision: requests
// need RequestMeta and Call, results carry resultType, and a request is
// cancelled by closing its stream (there is no session to notify).
func (r *RawSession) Modern() bool { return r.modern }

// Call sends one JSON-RPC request on the session and returns the backend's
// HTTP response (2xx; the caller closes its body). client is the client
// request's header, for the backend's forward_headers (nil: the client
// session's latest, session.Set.Forward). method and the routed name (tool
// or prompt name, resource URI; "" for none) are the Mcp-Method and
// Mcp-Name headers a Modern backend wants (2026-07-28 Streamable HTTP), and
// params its Mcp-Param-* headers (wire.ParamHeaders; nil: none). A
// 404 fails with mcpmsg.ErrSessionExpired; another non-2xx status fails naming
// it, with the body's JSON-RPC error if it has one.
func (r *RawSession) Call(ctx context.Context, client http.Header, method, name string, params map[string]string, body []byte) (*http.Response, error) {
	if !r.modern {
		return r.post(ctx, client, body, "", "", nil)
	}
	return r.post(ctx, client, body, method, name, params)
}

func (r *RawSession) post(ctx context.Context, client http.Header, body []byte, method, name string, params map[string]string) (*http.Response, error) {
	if client == nil && r.held != nil {
		client = r.held()
	}
	if client != nil && len(r.b.cfg.ForwardHeaders) > 0 {
		ctx = transport.WithClientHeader(ctx, client)
	}
	hr, err := r.request(ctx, body, method, name, params)
	if err != nil {
		return nil, err
	}
	resp, err := transport.RoundTrip(r.b.http, hr)
	if err != nil {
		if ctx.Err() == nil && r.broken != nil {
			r.broken()
		}
		return nil, r.b.transportFailure(ctx, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	return nil, r.refused(resp)
}

// request is the POST of body on the session: its media types, revision
// and session id, and on a Modern request its Mcp-Method, Mcp-Name and a
// tool's Mcp-Param-* headers (params).
func (r *RawSession) request(ctx context.Context, body []byte, method, name string, params map[string]string) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.b.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := hr.Header
	h["Content-Type"] = jsonContentType
	h["Accept"] = acceptBoth
	h["Mcp-Protocol-Version"] = []string{r.version}
	if r.id != "" {
		h["Mcp-Session-Id"] = []string{r.id}
	}
	if method != "" {
		h["Mcp-Method"] = []string{method}
	}
	if name != "" {
		h["Mcp-Name"] = []string{nameHeaderValue(name)}
	}
	for k, v := range params {
		h.Set(k, v)
	}
	return hr, nil
}

// refused is the error of a POST the backend answered with a status other
// than 2xx (it closes resp): mcpmsg.ErrSessionExpired for a 404 on a session (the
// session is marked broken), the JSON-RPC error the body holds, else the
// HTTP status.
func (r *RawSession) refused(resp *http.Response) error {
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && r.id != "" {
		if r.broken != nil { // nil: the control connection (ControlRaw)
			r.broken()
		}
		return mcpmsg.ErrSessionExpired
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var we *jsonrpc.Error
	if _, err := decodeResponse(b, 0, true); errors.As(err, &we) {
		return we
	}
	return fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// nameHeaderValue is a relayed request's Mcp-Name value: the name as is
// when it is a valid header value apart from non-ASCII bytes (UTF-8 is
// obs-text to HTTP), as the go-sdk client sends it, which these requests
// took before the relay; otherwise headerValue's SEP-2243 encoding. A
// go-sdk server compares Mcp-Name with the body undecoded: an encoded
// "test://café" was refused as a header mismatch.
func nameHeaderValue(s string) string {
	n := len(s)
	raw := n == 0 || (s[0] != ' ' && s[0] != '\t' && s[n-1] != ' ' && s[n-1] != '\t')
	raw = raw && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; i < n && raw; i++ {
		raw = s[i] >= 0x20 && s[i] != 0x7f
	}
	if raw {
		return s
	}
	return headerValue(s)
}

// Notify posts a notification or a response on the session and discards
// the backend's (202) answer.
func (r *RawSession) Notify(ctx context.Context, body []byte) error {
	resp, err := r.post(ctx, nil, body, "", "", nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.Body.Close()
}

// DrainNow reads the rest of a relayed response stream, so its connection
// is reused, and closes it; a stream still open after drainGrace is cut.
func DrainNow(body io.ReadCloser) {
	t := time.AfterFunc(drainGrace, func() { body.Close() })
	drain(body)
	t.Stop()
}
