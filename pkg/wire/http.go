package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FirstModern is the first protocol revision served statelessly
// (2026-07-28): a request at or after it is Modern.
const FirstModern = "2026-07-28"

// IsModern reports whether protocol version v is Modern (2026-07-28 or
// later; versions are dates and sort as strings). "" is not.
func IsModern(v string) bool { return v >= FirstModern }

// LatestLegacy is the newest Legacy protocol revision (2025-11-25): the
// one vmcp asks a backend for on behalf of a Legacy client.
const LatestLegacy = "2025-11-25"

// IsLoopback reports whether hostport (host or host:port) is localhost or
// a loopback IP (the go-sdk's rule; the edge's DNS-rebinding guard, the
// one guard, builds on it).
func IsLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// ErrBodyTooLarge fails ReadBody for a body over its limit.
var ErrBodyTooLarge = errors.New("request body too large")

// ReadBody returns r's whole body, at most limit bytes (<= 0: no limit),
// and leaves it on r as a *BufferedBody for the next handler; a body the
// endpoint already read is not read again. Over limit it fails with
// ErrBodyTooLarge and r.Body still yields the whole body (what was read,
// then the rest), so a later handler can answer it.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if bb, ok := r.Body.(*BufferedBody); ok {
		if limit > 0 && int64(len(bb.data)) > limit {
			return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, limit)
		}
		return bb.data, nil
	}
	if limit > 0 && r.ContentLength > limit {
		return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, limit)
	}
	size := r.ContentLength
	if size < 0 || size > 1<<20 {
		size = 512
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	rd := io.Reader(r.Body)
	if limit > 0 {
		rd = io.LimitReader(r.Body, limit+1)
	}
	if _, err := buf.ReadFrom(rd); err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	if limit > 0 && int64(buf.Len()) > limit {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf.Bytes()), r.Body), r.Body}
		return nil, fmt.Errorf("%w (over %d bytes)", ErrBodyTooLarge, limit)
	}
	r.Body = NewBufferedBody(buf.Bytes())
	return buf.Bytes(), nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// nullID is the id of an error response to a message whose id could not
// be read (JSON-RPC 2.0: null).
var nullID = json.RawMessage("null")

// WriteError answers with HTTP status and a JSON-RPC error body
// (application/json) for the raw request id (nil or unreadable: null, as
// JSON-RPC 2.0 asks for an id that could not be read). A notification's
// refusal, whose error has no id (MCP's Streamable HTTP), is
// WriteJSON(w, status, ErrorResponse(nil, err)).
func WriteError(w http.ResponseWriter, status int, id json.RawMessage, err error) {
	if _, ok := IDKey(id); !ok {
		id = nullID
	}
	WriteJSON(w, status, ErrorResponse(id, err))
}

// WriteJSON answers with HTTP status and body, one JSON-RPC message, as
// application/json with its Content-Length.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{MediaJSON}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// CheckVersion returns nil when the MCP-Protocol-Version header value v is
// absent or one of supported; else the error for HTTP 400 (-32022 naming
// v, with the supported versions and the one requested as data): a
// malformed or unknown version is refused as such on both revisions.
func CheckVersion(v string, supported []string) *jsonrpc.Error {
	if v == "" || slices.Contains(supported, v) {
		return nil
	}
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: Clip(v)})
	return &jsonrpc.Error{
		Code:    mcp.CodeUnsupportedProtocolVersion,
		Message: fmt.Sprintf("unsupported MCP-Protocol-Version header %s: vmcp serves %s", Quote(v), strings.Join(supported, ", ")),
		Data:    data,
	}
}

// The two media types of Streamable HTTP bodies, and the Accept header of
// a POST to a backend (it must list both).
const (
	MediaJSON  = "application/json"
	MediaSSE   = "text/event-stream"
	AcceptPOST = "application/json, text/event-stream"
)

// The go-sdk handler's refusals of a request whose Accept header lacks what
// Streamable HTTP requires (HTTP 400): vmcp answers with the same text.
const (
	AcceptPOSTRequired = "Accept must contain both 'application/json' and 'text/event-stream'"
	AcceptGETRequired  = "Accept must contain 'text/event-stream' for GET requests"
)

// MediaType is the media type of a Content-Type value, as
// mime.ParseMediaType returns it (lower case, no parameters; "" if it does
// not parse), without its allocations for the two values MCP sends.
func MediaType(contentType string) string {
	switch contentType {
	case "application/json", "text/event-stream":
		return contentType
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}
