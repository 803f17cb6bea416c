package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// A backend that is not Modern HTTP asks its client with server-to-client
// requests during a call; a Modern client can only be asked with
// input_required results. So such a call's backend request, on a session
// keyed by the client's principal and capabilities, is parked between
// rounds (park_stream.go): its mrtr.Call, in the parked Directory, holds
// the request's Stream while the client answers; the client's retry
// delivers the answers and waits for the next ask or the result. A call
// not resumed within Options.ParkTimeout is cancelled upstream.

// inputRequired is the input_required result vmcp builds for a parked call.
type inputRequired struct {
	Meta          mcp.Meta            `json:"_meta"`
	ResultType    string              `json:"resultType"`
	InputRequests mcp.InputRequestMap `json:"inputRequests"`
	RequestState  string              `json:"requestState"`
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
	out := d.outOf(call.ID)
	req := d.upstreamRequest(rq, c.method, c.name)
	var t upstream.Target
	var pinErr error
	claim := func() error { // before the answers reach the backend: what it sends next is this request's
		if t, pinErr = d.core.Resumed(req, st.Backend); pinErr != nil {
			return pinErr // the backend is gone: it never gets answers it could act on
		}
		if out != nil {
			out.Store(rq.stream)
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
	return d.drive(rq, req, t, c, call, counted(st.Backend)) // Do counts the Stream's request
}

// drive waits for the call's next outcome on behalf of rq, counted by the
// call core as one backend request: the result, or the backend's requests
// as an input_required result (the call parks). While it waits, the call's
// progress and logs go to rq's stream. done records this round's outcome
// (upstream.Core.Start or Begin).
func (d *Dispatcher) drive(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall, call *mrtr.Call, done func(error) error) ([]byte, error) {
	b := t.Backend
	if out := d.outOf(call.ID); out != nil {
		out.Store(rq.stream)
		defer out.CompareAndSwap(rq.stream, nil)
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

// outOf is where the parked call id's progress and logs go: the client
// request waiting on it (nil: the call is not tracked).
func (d *Dispatcher) outOf(id string) *atomic.Pointer[callStream] {
	if v, ok := d.streams.Load(id); ok {
		return &v.(*parkedStream).out
	}
	return nil
}
