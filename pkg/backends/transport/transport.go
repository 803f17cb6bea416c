// Package transport is how bytes reach a backend, below any session: the
// pooled HTTP client of one backend and the round-trippers a session's
// client is built from (headers, principal, tap, cache guard, answer
// check, steady GET stream), the one raw HTTP send (RoundTrip), and the
// go-sdk transports for streamable HTTP, SSE and a stdio process. It knows
// no Backend: what it needs of one is passed in (config, Steady).
package transport

import (
	"context"
	"fmt"
	"log/slog"

	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/outbound"
	"github.com/vmcp/vmcp/pkg/tracing"
)

// clientHeaderKey carries the inbound client request's headers in a context.
type clientHeaderKey struct{}

// WithClientHeader returns ctx carrying the inbound client request's header.
// Only names listed in the backend's forward_headers are copied to backend
// requests; nothing is forwarded by default (never Mcp-Session-Id).
func WithClientHeader(ctx context.Context, h http.Header) context.Context {
	if h == nil {
		return ctx
	}
	return context.WithValue(ctx, clientHeaderKey{}, h)
}

// headerTransport sets a backend's static headers and its allowlisted
// forwarded client headers on every outbound request.
type headerTransport struct {
	base    http.RoundTripper
	static  http.Header
	forward []string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.static) == 0 && len(t.forward) == 0 {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range t.static {
		req.Header[k] = v
	}
	in, ok := req.Context().Value(clientHeaderKey{}).(http.Header)
	if held, isHeld := req.Context().Value(heldKey{}).(func() http.Header); !ok && isHeld {
		in, ok = held(), true // read at each request: a reopened GET stream sends the latest
	}
	if ok {
		for _, name := range t.forward {
			if v := in.Values(name); len(v) > 0 {
				req.Header[http.CanonicalHeaderKey(name)] = v
			}
		}
	}
	return t.base.RoundTrip(req)
}

// NewHTTPClient builds the pooled HTTP client of one backend. Connections
// are kept alive and shared by the control connection and every backend
// session of that backend. On a streamable-HTTP backend, GET requests (the
// go-sdk client's standalone stream) go through SteadyGET with steady (getstream.go).
// Each request carries the W3C trace context of its backend span
// (tracing.Transport; nothing without one) and the backend's own token
// when it has auth (outbound.go).
func NewHTTPClient(cfg config.Backend, out *outbound.Source, steady Steady) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConns = 0
	base.MaxIdleConnsPerHost = 512
	base.IdleConnTimeout = 90 * time.Second
	static := http.Header{}
	for k, v := range cfg.Headers {
		static.Set(k, v)
	}
	var rt http.RoundTripper = &headerTransport{base: outboundRT(&tracing.Transport{Base: base}, out), static: static, forward: cfg.ForwardHeaders}
	if cfg.Transport == config.TransportStreamableHTTP || cfg.Transport == "" {
		rt = SteadyGET(rt, steady)
	}
	return &http.Client{Transport: rt}
}

// NewTransport returns a fresh mcp.Transport for one connection to cfg: a
// streamable HTTP or SSE client on the pooled HTTP client hc, or a new
// stdio process (stdio.go) whose stray output is logged to log and counted
// in skipped, and which calls exited (if set) once it has been ended.
func NewTransport(cfg config.Backend, hc *http.Client, retries int, log *slog.Logger, skipped prometheus.Counter, exited func()) (mcp.Transport, error) {
	switch cfg.Transport {
	case config.TransportStreamableHTTP, "":
		if cfg.URL == "" {
			break
		}
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: retries}, nil
	case config.TransportSSE:
		return &sseTransport{&mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: hc}}, nil
	case config.TransportStdio:
		return &stdioTransport{log: log, count: skipped, exited: exited, cfg: configStdio{name: cfg.Name, command: cfg.Command, args: cfg.Args, env: cfg.Env}}, nil
	}
	return nil, fmt.Errorf("backend %q: unsupported transport %q", cfg.Name, cfg.Transport)
}

// sseTransport is the go-sdk SSE client transport with its event stream
// (the GET made by Connect) outliving the connect timeout: the SDK binds
// that GET to Connect's context, so the stream ended (EOF) as soon as the
// connection was set up. The connect context still bounds the dial; the
// stream ends when the connection is closed.
type sseTransport struct{ *mcp.SSEClientTransport }

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel) // until connected
	c, err := t.SSEClientTransport.Connect(sctx)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			_ = c.Close()
			err = ctx.Err()
		}
		return nil, err
	}
	return &sseConn{Connection: c, cancel: cancel}, nil
}

// sseConn ends the event stream's context when the connection closes.
type sseConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// RoundTrip sends req on hc's transport itself, not hc.Do (a JSON-RPC
// POST follows no redirects, and Do's redirect bookkeeping clones every
// header), with what Do would still have added: the URL's user info as
// Basic auth when the request has no Authorization.
func RoundTrip(hc *http.Client, req *http.Request) (*http.Response, error) {
	if u := req.URL.User; u != nil && req.Header.Get("Authorization") == "" {
		p, _ := u.Password()
		req.SetBasicAuth(u.Username(), p)
	}
	return hc.Transport.RoundTrip(req)
}

// outboundRT is base sending out's tokens (base itself without out).
func outboundRT(base http.RoundTripper, out *outbound.Source) http.RoundTripper {
	if out == nil {
		return base
	}
	return &outbound.Transport{Base: base, Source: out, Principal: requestPrincipal}
}

// MaxResponse bounds one response message (the SDK client's default
// maximum SSE event size).
const MaxResponse = mcp.DefaultMaxEventSize
