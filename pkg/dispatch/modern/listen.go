package modern

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/capabilities"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/subscriptions"
	"github.com/vmcp/vmcp/pkg/wire"
)

const methodAcknowledged = "notifications/subscriptions/acknowledged"

// writeTimeout bounds one write on a listen stream; a client that does not
// read for this long loses its stream (counted as undeliverable).
const writeTimeout = 10 * time.Second

// listen answers subscriptions/listen on an SSE stream. The honored set is
// what the capabilities (pkg/capabilities, as in server/discover) allow,
// narrowed to URIs some backend serves and can subscribe to, and to the
// upstream subscriptions that succeeded. First comes the acknowledgement,
// then the stream's notifications until the client closes it
// (cancellation: everything it held is released, no result) or vmcp shuts
// down (the listen result); with nothing honored the result follows the
// acknowledgement at once. Every message carries _meta subscriptionId = the
// request's raw id. A missing notifications param is -32602.
func (d *Dispatcher) listen(rq *request, p *mcp.SubscriptionsListenParams) ([]byte, error) {
	if p.Notifications == nil {
		return nil, invalidParams(`subscriptions/listen: missing required "notifications" param`)
	}
	done, _ := d.enter()
	defer done()
	pr := identity.From(rq.r.Context())
	release, err := d.listens.admit(pr, d.opts.MaxListens, d.opts.MaxListensPerPrincipal)
	if err != nil {
		return nil, err
	}
	cat := d.agg.For(pr.Key())
	var resources []subscriptions.Resource
	var own []ownResource // served by a per-principal backend: held by this stream (ownlisten.go)
	seen := map[string]bool{}
	honored := capabilities.Honored(d.opts.Capabilities(), p.Notifications, func(uri string) bool {
		if seen[uri] {
			return false // a URI named again is held, subscribed and acknowledged once
		}
		seen[uri] = true
		route, ok := d.subscribable(cat, uri)
		ok = ok && d.opts.Policy.Allows(pr, aggregator.KindResources, route.Backend, uri)
		if ok && d.perPrincipal(route.Backend) {
			own = append(own, ownResource{uri: uri, route: route})
			return false // honored once held
		}
		if ok && !slices.ContainsFunc(resources, func(r subscriptions.Resource) bool { return r.URI == uri }) {
			resources = append(resources, subscriptions.Resource{URI: route.Name, Backend: route.Backend})
		}
		return ok
	})
	stream := d.subs.OpenFor(rq.r.Context(), pr, rq.id, honored, resources)
	defer func() { release(); d.subs.Release(stream) }() // within the limit while counted (ModernListens)
	held := d.watchOwn(rq, pr, stream.Honored)           // per-principal backends' list changes (ownlisten.go)
	defer held.Close()
	d.holdOwn(rq, pr, stream, own, held)
	rq.written = true
	sink := startSSE(rq.w)
	if err := stream.Send(sink, methodAcknowledged, &mcp.SubscriptionsAcknowledgedParams{Notifications: stream.Honored}); err != nil {
		return nil, nil // the client is gone
	}
	if !empty(stream.Honored) {
		if graceful, _ := stream.Serve(rq.r.Context(), sink); !graceful {
			return nil, nil // cancelled by the client, or its stream broke
		}
	}
	res := &mcp.SubscriptionsListenResult{Meta: d.meta()}
	res.Meta[mcp.MetaKeySubscriptionID] = rq.id
	res.ResultType = "complete"
	b, err := json.Marshal(res)
	if err == nil {
		_ = sink.response(rq.id, b)
	}
	return nil, nil
}

// subscribable routes uri to a backend that advertises resources.subscribe.
func (d *Dispatcher) subscribable(cat *aggregator.Catalogue, uri string) (aggregator.Route, bool) {
	route, ok := cat.Resource(uri)
	if !ok {
		return route, false
	}
	b, err := d.mgr.Backend(route.Backend)
	if err != nil {
		return route, false
	}
	c := b.Capabilities()
	return route, c != nil && c.Resources != nil && c.Resources.Subscribe
}

// catalogueChanged queues one list_changed per changed kind on the listen
// streams granted it (resource templates count as resources); under a
// policy, only on the streams of principals whose own view changed.
func (d *Dispatcher) catalogueChanged(old, cur *aggregator.Catalogue, kinds []aggregator.Kind) {
	if d.opts.Policy != nil {
		d.subs.ListChangedFor(func(p identity.Principal) (bool, bool, bool) { return d.opts.Policy.Changed(p, old, cur) })
		return
	}
	d.subs.ListChanged(slices.Contains(kinds, aggregator.KindTools), slices.Contains(kinds, aggregator.KindPrompts),
		slices.Contains(kinds, aggregator.KindResources) || slices.Contains(kinds, aggregator.KindTemplates))
}

func empty(n mcp.NotificationSubscriptions) bool {
	return !n.ToolsListChanged && !n.PromptsListChanged && !n.ResourcesListChanged && len(n.ResourceSubscriptions) == 0
}

// sseSink writes JSON-RPC messages as SSE events on one listen response,
// flushing after each. It implements subscriptions.Sink.
type sseSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE sends the SSE response headers (200, text/event-stream, no
// caching or proxy buffering) and returns the stream's sink.
func startSSE(w http.ResponseWriter) *sseSink {
	wire.SSEHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	s := &sseSink{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// Send writes one JSON-RPC notification event.
func (s *sseSink) Send(method string, params mcp.Params) error {
	var p json.RawMessage
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return err
		}
	}
	return s.event(wire.Notification(method, p))
}

// response writes the JSON-RPC response to the listen request.
func (s *sseSink) response(id json.RawMessage, result []byte) error {
	return s.event(wire.Response(id, result))
}

// event writes data as one SSE "message" event and flushes it, within
// writeTimeout (where the ResponseWriter supports deadlines).
func (s *sseSink) event(data []byte) error {
	buf := wire.AppendEvent(make([]byte, 0, len(data)+24), mcp.Event{Name: "message", Data: data})
	dl := s.rc.SetWriteDeadline(time.Now().Add(writeTimeout)) == nil
	if dl {
		defer func() { _ = s.rc.SetWriteDeadline(time.Time{}) }()
	}
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}
