package backends

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// closeTracker records that a body was closed.
type closeTracker struct {
	io.Reader
	closed chan struct{}
}

func (c *closeTracker) Close() error { close(c.closed); return nil }

func response(status int, contentType, body string) (*http.Response, *closeTracker) {
	b := &closeTracker{Reader: strings.NewReader(body), closed: make(chan struct{})}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	return &http.Response{StatusCode: status, Header: h, Body: b}, b
}

func TestReadResponse(t *testing.T) {
	cases := []struct {
		name, ct, body string
		status         int
		want           string // raw result
		wantCode       int64  // JSON-RPC error code
		wantErr        string // other error (substring)
	}{
		{name: "json", ct: "application/json", body: `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`, want: `{"a":1}`},
		{name: "json with charset", ct: "application/json; charset=utf-8", body: `{"jsonrpc":"2.0","id":7,"result":{}}`, want: `{}`},
		{name: "json error", ct: "application/json", body: `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}`, wantCode: -32602},
		{name: "json other id", ct: "application/json", body: `{"jsonrpc":"2.0","id":8,"result":{}}`, wantErr: "not the awaited"},
		{name: "sse", ct: "text/event-stream", body: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":\"y\"}}\n\n", want: `{"x":"y"}`},
		{name: "sse crlf, priming event, notification first", ct: "text/event-stream",
			body: "id: 0\r\ndata:\r\n\r\n: comment\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\r\n\r\n" +
				"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\r\n\r\n",
			want: `{"ok":true}`},
		{name: "sse multi-line data", ct: "text/event-stream", body: "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":7,\"result\":[1,\ndata: 2]}\n\n", want: "[1,\n2]"},
		{name: "sse other id then ours", ct: "text/event-stream", body: "data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":1}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":2}\n\n", want: `2`},
		{name: "sse last event unterminated", ct: "text/event-stream", body: "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":3}", want: `3`},
		{name: "sse error", ct: "text/event-stream", body: "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"boom\"}}\n\n", wantCode: -32603},
		{name: "sse without response", ct: "text/event-stream", body: "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n", wantErr: "without a response"},
		{name: "sse garbage", ct: "text/event-stream", body: "data: {not json\n\n", wantErr: "malformed"},
		{name: "http error with JSON-RPC body", status: 400, ct: "application/json", body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"mismatch"}}`, wantCode: -32020},
		{name: "http error plain", status: 502, ct: "text/plain", body: "bad gateway", wantErr: "HTTP 502"},
		{name: "unsupported type", ct: "text/html", body: "<html>", wantErr: "unsupported content type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status := c.status
			if status == 0 {
				status = http.StatusOK
			}
			resp, body := response(status, c.ct, c.body)
			res, err := (&Backend{log: slog.New(slog.DiscardHandler)}).readResponse(resp, 7)
			<-body.closed // always consumed and closed (perhaps in the background)
			switch {
			case c.wantCode != 0:
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != c.wantCode {
					t.Fatalf("got %s, %v; want JSON-RPC error %d", res, err, c.wantCode)
				}
			case c.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %s, %v; want error containing %q", res, err, c.wantErr)
				}
			default:
				if err != nil || string(res) != c.want {
					t.Fatalf("got %s, %v; want %s", res, err, c.want)
				}
			}
		})
	}
}

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"echo":         "echo",
		"a b":          "a b",
		"":             "",
		" lead":        "=?base64?IGxlYWQ=?=",
		"trail\t":      "=?base64?dHJhaWwJ?=",
		"héllo":        "=?base64?aMOpbGxv?=",
		"=?base64?x?=": "=?base64?PT9iYXNlNjQ/eD89?=",
		"line\nbreak":  "=?base64?bGluZQpicmVhaw==?=",
	} {
		if got := headerValue(in); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", in, got, want)
		}
	}
}
