package legacy

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
)

// clientSession is vmcp's state for one Legacy client session: its backend
// sessions (one per backend, opened on first use), its in-flight calls (for
// progress and server-to-client requests) and its log level.
type clientSession struct {
	id       string
	front    *mcp.ServerSession
	d        *Dispatcher
	backends *backends.SessionSet
	calls    *calls

	mu       sync.Mutex
	logLevel mcp.LoggingLevel // "" until logging/setLevel
}

func newClientSession(d *Dispatcher, ss *mcp.ServerSession) *clientSession {
	s := &clientSession{id: ss.ID(), front: ss, d: d, calls: newCalls()}
	s.backends = d.mgr.NewSessionSet(s.sessionOptions)
	return s
}

// backend returns this session's backend session for name.
func (s *clientSession) backend(ctx context.Context, name string) (*mcp.ClientSession, *backends.Backend, error) {
	b, err := s.d.mgr.Backend(name)
	if err != nil {
		return nil, nil, err
	}
	cs, err := s.backends.Get(ctx, name)
	return cs, b, err
}

func (s *clientSession) close() {
	if err := s.backends.Close(); err != nil {
		s.d.log.Warn("closing backend sessions", "session", s.id, "error", err)
	}
}

// sessionOptions configure this session's backend sessions: the backend
// sees exactly the client's declared capabilities, and its server-to-client
// requests and notifications reach this client only.
func (s *clientSession) sessionOptions(b *backends.Backend) backends.SessionOptions {
	caps := &mcp.ClientCapabilities{}
	if p := s.front.InitializeParams(); p != nil && p.Capabilities != nil {
		caps = cloneCaps(p.Capabilities)
	}
	opts := &mcp.ClientOptions{Capabilities: caps}
	if caps.Elicitation != nil {
		opts.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return s.front.Elicit(s.calls.origin(ctx, b.Name(), "elicitation/create"), r.Params)
		}
	}
	if caps.Sampling != nil {
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, r *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return s.front.CreateMessageWithTools(s.calls.origin(ctx, b.Name(), "sampling/createMessage"), r.Params)
		}
	}
	opts.LoggingMessageHandler = func(ctx context.Context, r *mcp.LoggingMessageRequest) {
		if err := s.front.Log(context.Background(), r.Params); err != nil {
			s.d.undeliverable("notifications/message", s.id, b.Name(), err)
		}
	}
	opts.ResourceUpdatedHandler = func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		s.d.resourceUpdated(s, r.Params)
	}
	var receiving []mcp.Middleware
	if caps.RootsV2 != nil {
		receiving = append(receiving, s.rootsMiddleware(b.Name()))
	}
	return backends.SessionOptions{
		Client:    opts,
		Receiving: receiving,
		Tap:       func(ctx context.Context, msg *jsonrpc.Request) { s.tap(ctx, b.Name(), msg) },
		Init:      s.initBackendSession,
	}
}

// initBackendSession applies the client's log level to a new backend session.
func (s *clientSession) initBackendSession(ctx context.Context, cs *mcp.ClientSession) error {
	s.mu.Lock()
	level := s.logLevel
	s.mu.Unlock()
	return setLevel(ctx, cs, level)
}

// setLevel sends logging/setLevel to a backend session that offers logging.
func setLevel(ctx context.Context, cs *mcp.ClientSession, level mcp.LoggingLevel) error {
	r := cs.InitializeResult()
	if level == "" || r == nil || r.Capabilities == nil || r.Capabilities.Logging == nil {
		return nil
	}
	return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
}

// rootsMiddleware answers a backend's roots/list by asking this client.
func (s *clientSession) rootsMiddleware(backend string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			return s.front.ListRoots(s.calls.origin(ctx, backend, method), &mcp.ListRootsParams{})
		}
	}
}

// cloneCaps copies the client's capabilities for a backend session. Roots
// are offered without listChanged: roots/list is answered live by the
// client, but its roots/list_changed is not relayed.
func cloneCaps(c *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	cp := *c
	if c.RootsV2 != nil {
		cp.RootsV2 = &mcp.RootCapabilities{}
	}
	return &cp
}
