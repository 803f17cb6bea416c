package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// errNoAsks refuses a server-to-client request on a completion's stream:
// a completion has no call stream for vmcp to ask the client on.
var errNoAsks = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "vmcp relays no server-to-client request during completion/complete"}

// completeDo sends completion/complete (params p, routed to t, a
// streamable HTTP backend: ViaRelay) through upstream.Core.Do on the
// client's own backend session and decodes the backend's result. Log
// messages on its stream go to the client by its level; the session's end
// cancels it.
func (d *Dispatcher) completeDo(ctx context.Context, s *clientSession, req *upstream.Request, t upstream.Target, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	params, err := wire.DecodeObject(raw)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	level := s.logLevel
	s.mu.Unlock()
	req.Target, req.Sessions = &t, s.backends
	req.Meta, req.Caps, req.LogLevel = backends.ForwardMetaRaw(params["_meta"]), s.capabilitiesRaw(), string(level)
	delete(params, "_meta")
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
			return nil, backends.WireError(st.Backend(), ended(ctx))
		case err != nil:
			return nil, err
		case m.Kind == upstream.KindResult:
			var res mcp.CompleteResult
			if err := json.Unmarshal(m.Result, &res); err != nil {
				return nil, backends.WireError(st.Backend(), fmt.Errorf("malformed completion/complete result: %w", err))
			}
			return &res, nil
		case m.Kind == upstream.KindAsk:
			if aerr := st.Answer(ctx, m.ID, nil, errNoAsks); aerr != nil {
				d.undeliverable(m.Method+" response", s.id, st.Backend(), aerr)
			}
		default:
			d.completionNote(s, st.Backend(), &m)
		}
	}
}

// completionNote delivers a notification on a completion's stream: a log
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
