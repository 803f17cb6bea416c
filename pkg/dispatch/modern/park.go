package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// A Legacy backend asks its client with server-to-client requests during a
// call; a Modern client can only be asked with input_required results. So
// when a Modern client that declared elicitation, sampling or roots calls a
// Legacy backend, the call runs on a backend session with exactly those
// capabilities (park_session.go; pooled by pool.go) on its own goroutine
// (mrtr.Call). The backend's request is parked there and returned to the
// client as an inputRequests entry with a requestState naming the call;
// the client's retry delivers the answer and waits for the next request
// or the result. A call not resumed within Options.ParkTimeout is
// cancelled upstream.

// inputRequired is the input_required result vmcp builds for a parked call.
type inputRequired struct {
	Meta          mcp.Meta            `json:"_meta"`
	ResultType    string              `json:"resultType"`
	InputRequests mcp.InputRequestMap `json:"inputRequests"`
	RequestState  string              `json:"requestState"`
}

// park starts c (routed ViaParked to t) on a parkSession of t's backend
// for a client that declared caps.
func (d *Dispatcher) park(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall, caps *mcp.ClientCapabilities, capsKey string) ([]byte, error) {
	b := t.Backend
	done, err := d.enterParked(rq.r.Context(), req.Asks)
	if err != nil {
		return nil, err
	}
	hctx := backends.WithClientHeader(rq.r.Context(), rq.r.Header)
	key := capsKey + "\x00" + b.Principal(rq.r.Header)
	ps, err := d.pool.get(hctx, b, caps, key)
	if err != nil {
		done()
		return nil, backends.WireError(b.Name(), err)
	}
	// The first round's backend span is the backend request's: its
	// context carries it to the backend (traceparent header, and _meta).
	sctx, first := d.core.Begin(hctx, req, t)
	call := mrtr.NewCall(sctx, mrtr.NewID(), b.Name())
	if err := d.record(call); err != nil {
		d.pool.put(ps, true)
		done()
		return nil, first(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
	}
	meta := backends.ForwardMeta(c.meta)
	if meta != nil {
		tracing.RewriteMeta(sctx, meta) // a client's _meta.traceparent names vmcp's backend span instead
	}
	token := rq.stream.minted // progress reaches whichever request waits (drive)
	if token != "" {
		meta["progressToken"] = token
	}
	ps.bind(call, token)
	ps.out.Store(rq.stream)
	d.pool.track(call.ID, ps)
	var broken bool // written by the call, read by its cleanup (same goroutine)
	call.Start(func(ctx context.Context) (any, error) {
		res, err := parkedRounds(ctx, call, ps.cs, c, meta, func() (*mcp.ClientSession, error) {
			next, err := d.pool.renew(ctx, b, caps, key)
			if err != nil {
				return nil, err
			}
			next.bind(call, token)
			next.out.Store(ps.out.Load())
			d.pool.track(call.ID, next)
			ps.bind(nil, "")
			d.pool.put(ps, false)
			ps = next // the cleanup puts this one
			return next.cs, nil
		})
		var we *jsonrpc.Error
		broken = err != nil && ctx.Err() == nil && !errors.As(err, &we)
		return res, err
	}, func(abandoned bool) {
		d.pool.track(call.ID, nil)
		ps.bind(nil, "")
		d.pool.put(ps, !abandoned && !broken)
		d.parked.Remove(call.ID)
		done()
	})
	return d.drive(rq, req, t, c, call, first)
}

// record adds call, not started yet, to the parked directory, unless Close
// began meanwhile: its cancelling of the parked calls may have run before
// the Add, and nothing else would end the call.
func (d *Dispatcher) record(call *mrtr.Call) error {
	if err := d.parked.Add(call); err != nil {
		return fmt.Errorf("recording the call: %w", err)
	}
	d.mu.Lock() // Close sets closing under mu, then cancels what it finds
	closing := d.closing.Load()
	d.mu.Unlock()
	if closing {
		d.parked.Remove(call.ID)
		return errShutdown
	}
	return nil
}

// parkedRounds sends c on cs for call, then, while the Legacy backend's
// result still carries inputRequests (mrtr.MoreInput), asks the client
// for them as one more parked round and calls again with the answers and
// the backend's requestState. A first request the backend's session no
// longer knows (it restarted: not processed) is sent once more on the
// session renew opens.
func parkedRounds(ctx context.Context, call *mrtr.Call, cs *mcp.ClientSession, c *mrtrCall, meta mcp.Meta, renew func() (*mcp.ClientSession, error)) (any, error) {
	sctx := context.WithValue(ctx, parkedCallKey{}, call) // its requests' logs are the call's (parkSession.notify)
	res, err := c.send(sctx, cs, meta, nil, "")
	if err != nil && ctx.Err() == nil && backends.SessionForgotten(err) {
		if cs, err = renew(); err == nil {
			res, err = c.send(sctx, cs, meta, nil, "")
		}
	}
	for n := 0; err == nil; n++ {
		reqs, state := inputsOf(res)
		if !mrtr.MoreInput(false, reqs) {
			break
		}
		if n >= mrtr.MaxRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: backend %q: more than %d input rounds", c.method, call.Backend, mrtr.MaxRounds)}
		}
		in, aerr := call.AskAll(ctx, reqs)
		if aerr != nil {
			return nil, aerr
		}
		res, err = c.send(sctx, cs, meta, in, state)
	}
	return res, err
}

// inputsOf is the inputRequests and requestState of a backend's result.
func inputsOf(res any) (mcp.InputRequestMap, string) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState
	}
	return nil, ""
}

// resume serves a retry whose requestState names a parked call.
func (d *Dispatcher) resume(rq *request, c *mrtrCall, st mrtr.State) ([]byte, error) {
	if st.Node != d.opts.NodeID {
		if d.opts.ResumeOn != nil {
			rq.r.Body = io.NopCloser(bytes.NewReader(rq.body))
			if err := d.opts.ResumeOn(rq.w, rq.r, st.Node); err == nil {
				rq.written = true
				return nil, nil
			}
		}
		return nil, invalidParams("%s: the call this requestState names is parked on another node", c.method)
	}
	call, ok := d.parked.Lookup(st.Call)
	if !ok || call.Backend != st.Backend {
		return nil, invalidParams("%s: %v", c.method, mrtr.ErrNotParked)
	}
	d.newCallStream(rq, st.Backend, c.meta)
	ps := d.pool.tracked(call.ID)
	req := d.upstreamRequest(rq, c.method, c.name)
	var t upstream.Target
	var pinErr error
	claim := func() error { // before the answers reach the backend: what it sends next is this request's
		if t, pinErr = d.core.Resumed(req, st.Backend); pinErr != nil {
			return pinErr // the backend is gone: it never gets answers it could act on
		}
		if ps != nil {
			ps.out.Store(rq.stream)
		}
		return nil
	}
	if err := call.Resume(st.Round, c.responses, claim); err != nil {
		if pinErr != nil {
			return nil, pinErr
		}
		return nil, invalidParams("%s: %v", c.method, err)
	}
	c.backend = st.Backend
	return d.drive(rq, req, t, c, call, d.core.Start(req, t))
}

// drive waits for the call's next outcome on behalf of rq, counted by the
// call core as one backend request: the result, or the backend's requests
// as an input_required result (the call parks). While it waits, the call's
// progress and logs go to rq's stream. done records this round's outcome
// (upstream.Core.Start or Begin).
func (d *Dispatcher) drive(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall, call *mrtr.Call, done func(error) error) ([]byte, error) {
	b := t.Backend
	if ps := d.pool.tracked(call.ID); ps != nil {
		ps.out.Store(rq.stream)
		defer ps.out.CompareAndSwap(rq.stream, nil)
	}
	out, err := call.Next(rq.r.Context(), b.Timeout())
	switch {
	case errors.Is(err, mrtr.ErrBackendIdle):
		return nil, done(context.DeadlineExceeded)
	case err != nil:
		return nil, done(upstream.ClientEnded(err)) // the client is gone; nothing can be written
	case out.Asks == nil && out.Err != nil:
		return nil, done(out.Err)
	case out.Asks == nil:
		done(nil)
		return d.finish(c, out.Result, true)
	}
	done(nil)
	round := call.Park(d.opts.ParkTimeout)
	return json.Marshal(&inputRequired{
		Meta:          d.meta(),
		ResultType:    "input_required",
		InputRequests: out.Asks,
		RequestState: d.state.Seal(mrtr.State{Method: c.method, Name: c.name, Backend: b.Name(),
			Parked: true, Node: d.opts.NodeID, Call: call.ID, Round: round}.For(req.Principal)),
	})
}
