package modern

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/capabilities"
)

const methodAcknowledged = "notifications/subscriptions/acknowledged"

// listen answers subscriptions/listen on an SSE stream: first the
// acknowledgement with the honored subset of the requested notifications,
// then (once nothing is honored, or at shutdown) the listen result. Every
// message carries _meta subscriptionId = the request's raw id. A missing
// notifications param is -32602 (2026-07-28 subscriptions).
func (d *Dispatcher) listen(rq *request, p *mcp.SubscriptionsListenParams) ([]byte, error) {
	if p.Notifications == nil {
		return nil, invalidParams(`subscriptions/listen: missing required "notifications" param`)
	}
	cat := d.agg.Current()
	honored := capabilities.Honored(d.opts.Capabilities(), p.Notifications, func(uri string) bool {
		_, ok := cat.Resource(uri)
		return ok
	})
	rq.written = true
	sink := startSSE(rq.w)
	stream := d.subs.Listen(rq.id, honored, sink)
	defer d.subs.Release(stream)
	if err := stream.Send(methodAcknowledged, &mcp.SubscriptionsAcknowledgedParams{Notifications: honored}); err != nil {
		return nil, nil // the client is gone
	}
	if !empty(honored) {
		select {
		case <-rq.r.Context().Done():
			return nil, nil // the client closed the stream: cancellation, no result
		case <-stream.Done():
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
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseSink{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// Send writes one JSON-RPC notification event.
func (s *sseSink) Send(method string, params mcp.Params) error {
	m, err := json.Marshal(method)
	if err != nil {
		return err
	}
	msg := append([]byte(`{"jsonrpc":"2.0","method":`), m...)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return err
		}
		msg = append(append(append(msg, `,"params":`...), p...), '}')
	} else {
		msg = append(msg, '}')
	}
	return s.event(msg)
}

// response writes the JSON-RPC response to the listen request.
func (s *sseSink) response(id json.RawMessage, result []byte) error {
	msg := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	msg = append(append(append(msg, `,"result":`...), result...), '}')
	return s.event(msg)
}

// event writes data as one SSE "message" event and flushes it.
func (s *sseSink) event(data []byte) error {
	buf := make([]byte, 0, len(data)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(append(buf, data...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}
