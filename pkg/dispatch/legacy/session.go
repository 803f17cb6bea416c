package legacy

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
)

// clientSession is vmcp's state for one Legacy client session: its backend
// sessions (one per backend, opened on first use) and what the client asked
// for (log level, resource subscriptions).
type clientSession struct {
	id       string
	front    *mcp.ServerSession
	d        *Dispatcher
	backends *backends.SessionSet

	mu       sync.Mutex
	logLevel mcp.LoggingLevel // "" until logging/setLevel
}

func newClientSession(d *Dispatcher, ss *mcp.ServerSession) *clientSession {
	s := &clientSession{id: ss.ID(), front: ss, d: d}
	s.backends = d.mgr.NewSessionSet(s.clientOptions)
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

// clientOptions are the options of this session's backend sessions: the
// backend sees exactly the client's declared capabilities, and its
// server-to-client requests are answered by this client only.
func (s *clientSession) clientOptions(b *backends.Backend) *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	if p := s.front.InitializeParams(); p != nil && p.Capabilities != nil {
		caps = cloneCaps(p.Capabilities)
	}
	opts := &mcp.ClientOptions{Capabilities: caps}
	if caps.Elicitation != nil {
		opts.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return s.front.Elicit(ctx, r.Params)
		}
	}
	if caps.Sampling != nil {
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, r *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return s.front.CreateMessageWithTools(ctx, r.Params)
		}
	}
	opts.LoggingMessageHandler = func(ctx context.Context, r *mcp.LoggingMessageRequest) {
		if err := s.front.Log(ctx, r.Params); err != nil {
			s.d.log.Warn("log message not delivered", "session", s.id, "backend", b.Name(), "error", err)
		}
	}
	return opts
}

// cloneCaps copies the client's capabilities for a backend session. Roots
// are not offered until roots/list forwarding exists: the SDK client would
// answer roots/list from its own empty list, which would be a false answer.
func cloneCaps(c *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	cp := *c
	cp.RootsV2 = nil
	return &cp
}
