// Package wire holds the Streamable HTTP and JSON-RPC wire details that
// both dispatchers read once per request: the raw message envelope, the
// Accept and Content-Type checks of a POST, and a body kept in memory for
// the next handler.
package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Message is a JSON-RPC 2.0 message as first decoded: id, params, result
// and error stay raw, so the id is echoed byte for byte and params are
// decoded once, by whoever handles the method.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// PrefersEventStream reports whether the Accept values rank
// text/event-stream above application/json: a higher q, or, at equal q,
// listed first. A Streamable HTTP server may answer a request with either;
// vmcp answers JSON unless the client prefers a stream.
func PrefersEventStream(values []string) bool {
	jsonQ, sseQ, jsonAt, sseAt, at := -1.0, -1.0, 0, 0, 0
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			at++
			base, params, _ := strings.Cut(part, ";")
			q := acceptQ(params)
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				if q > jsonQ {
					jsonQ, jsonAt = q, at
				}
			case "text/event-stream":
				if q > sseQ {
					sseQ, sseAt = q, at
				}
			}
		}
	}
	return sseQ > 0 && (sseQ > jsonQ || sseQ == jsonQ && sseAt < jsonAt)
}

// acceptQ is the q parameter of one Accept member's parameters (1 when
// absent or unreadable).
func acceptQ(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return q
			}
		}
	}
	return 1
}

// AcceptsBoth reports whether the Accept values admit both
// application/json and text/event-stream (Streamable HTTP: a client's POST
// MUST list both), as the go-sdk handler checks.
func AcceptsBoth(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				js = true
			case "text/event-stream", "text/*":
				sse = true
			case "*/*":
				js, sse = true, true
			}
		}
	}
	return js && sse
}

// AcceptsEventStream reports whether the Accept values admit
// text/event-stream (text/event-stream, text/* or */*, any parameters), as
// the go-sdk handler checks a GET.
func AcceptsEventStream(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return false
}

// IsJSONRPC reports whether a message's "jsonrpc" member is "2.0", the
// only version JSON-RPC 2.0 admits.
func IsJSONRPC(version string) bool { return version == "2.0" }

// IsMediaType reports whether a Content-Type header value has media type
// want (parameters ignored, case-insensitive).
func IsMediaType(value, want string) bool {
	base, _, _ := strings.Cut(value, ";")
	return strings.EqualFold(strings.TrimSpace(base), want)
}

// BufferedBody is a request body already read into memory and put back on
// the request: a later handler takes Bytes instead of reading it again.
type BufferedBody struct {
	*bytes.Reader
	data []byte
}

// NewBufferedBody returns data as a request body.
func NewBufferedBody(data []byte) *BufferedBody {
	return &BufferedBody{Reader: bytes.NewReader(data), data: data}
}

// Bytes returns the whole body, however much was read.
func (b *BufferedBody) Bytes() []byte { return b.data }

// Close does nothing: the body is in memory.
func (b *BufferedBody) Close() error { return nil }
