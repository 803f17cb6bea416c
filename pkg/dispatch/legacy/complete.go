package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// errNoAsks refuses a server-to-client request on the stream of a
// completion or subscription: it has no call stream to ask the client on.
var errNoAsks = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "vmcp relays no server-to-client request during completion/complete or resources/(un)subscribe"}

// completeDo sends completion/complete (params p, routed to t: ViaRelay)
// through upstream.Core.Do on the client's own backend session, on any
// transport, and decodes the backend's result.
func (d *Dispatcher) completeDo(ctx context.Context, s *clientSession, req *upstream.Request, t upstream.Target, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	params, err := wire.DecodeObject(raw)
	if err != nil {
		return nil, err
	}
	res, err := d.sendDo(ctx, s, req, t, params)
	if err != nil {
		return nil, err
	}
	var out mcp.CompleteResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, mcpmsg.WireError(t.Backend.Name(), fmt.Errorf("malformed completion/complete result: %w", err))
	}
	return &out, nil
}

// sendDo sends one request of the session that is neither a call, a get
// nor a read (completion/complete, resources/(un)subscribe; params without
// the envelope, its _meta forwarded) through upstream.Core.Do on the
// client's own backend session and returns the backend's raw result. Log
// messages on its stream go to the client by its level, an ask is refused
// to the backend (no call stream to ask on); the session's end cancels it.
func (d *Dispatcher) sendDo(ctx context.Context, s *clientSession, req *upstream.Request, t upstream.Target, params map[string]json.RawMessage) (json.RawMessage, error) {
	s.prepare(req, t, params)
	req.Params = wire.Object(params)
	ctx, unbind := s.bound(ctx)
	defer unbind()
	st, err := d.core.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for {
		m, err := st.Next(context.Background()) // the reader always ends the stream
		switch {
		case errors.Is(err, upstream.ErrStreamEnded):
			return nil, mcpmsg.WireError(st.Backend(), ended(ctx))
		case err != nil:
			return nil, err
		case m.Kind == upstream.KindResult:
			return m.Result, nil
		case m.Kind == upstream.KindAsk:
			if aerr := st.Answer(ctx, m.ID, nil, errNoAsks); aerr != nil {
				d.undeliverable(m.Method+" response", s.id, st.Backend(), aerr)
			}
		default:
			d.completionNote(s, st.Backend(), &m)
		}
	}
}

// completionNote delivers a notification on sendDo's stream: a log
// message to the client by its level; anything else is undeliverable.
func (d *Dispatcher) completionNote(s *clientSession, backend string, m *upstream.Message) {
	err := errors.New("no call stream to deliver it on")
	if m.Method == "notifications/message" {
		var p mcp.LoggingMessageParams
		if err = json.Unmarshal(m.Params, &p); err == nil {
			err = s.front.Log(context.Background(), &p)
		}
	}
	if err != nil {
		d.undeliverable(m.Method, s.id, backend, err)
	}
}
