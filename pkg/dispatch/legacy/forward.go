package legacy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// complete routes completion/complete by its reference: a prompt name or a
// resource (template) URI.
func (d *Dispatcher) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	s, err := d.session(req.Session)
	if err != nil {
		return nil, err
	}
	params, backend, err := d.agg.For(s.principal().Key()).Completion(req.Params)
	if err != nil {
		return nil, err
	}
	ureq := s.request(req.Extra, "completion/complete", "")
	t, err := d.core.Pin(ureq, backend, "", nil)
	if err != nil {
		return nil, err
	}
	return d.completeDo(ctx, s, ureq, t, params) // ViaRelay on every transport
}

// subscribe forwards resources/subscribe over the caller's own backend
// session to the backend that serves the URI.
func (d *Dispatcher) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return d.subscription(ctx, req.Session, req.Extra, "resources/subscribe", req.Params.URI)
}

// unsubscribe forwards resources/unsubscribe like subscribe.
func (d *Dispatcher) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return d.subscription(ctx, req.Session, req.Extra, "resources/unsubscribe", req.Params.URI)
}

func (d *Dispatcher) subscription(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, method, uri string) error {
	s, err := d.session(ss)
	if err != nil {
		return err
	}
	req := s.request(extra, method, uri)
	t, err := d.core.Route(req)
	if err != nil {
		return err
	}
	ureq := *req
	ureq.Sessions = s.backends
	ureq.Caps = s.capabilitiesRaw()
	ctx, unbind := s.bound(ctx)
	defer unbind()
	// Through the call core: raw on a Legacy backend session; on a Modern
	// one a listen this session holds, its resources/updated to it alone.
	return d.core.Subscription(ctx, &ureq, t, s.listens, func(uri string) {
		d.resourceUpdated(s, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	})
}

// request is the call core's view of one of this session's requests.
func (s *clientSession) request(extra *mcp.RequestExtra, method, name string) *upstream.Request {
	req := &upstream.Request{Method: method, Name: name, Revision: upstream.RevisionLegacy, Principal: s.principal()}
	if extra != nil {
		req.Header = extra.Header
	}
	return req
}
