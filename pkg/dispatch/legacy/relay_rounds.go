package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
	"golang.org/x/sync/errgroup"
)

// rawInputs is what the relay reads of a backend's result to tell whether
// it asks for another round (mrtr.MoreInput): a Modern backend's
// input_required result, or a plain one still carrying inputRequests (a
// Legacy go-sdk server asks one round of its handler's inputRequests
// itself and returns the next round's in a plain result).
type rawInputs struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]rawInputRequest `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
}

// rawMoreInput decodes res's rawInputs when it asks for another round. A
// result naming inputRequests or input_required whose resultType,
// inputRequests or requestState has the wrong type fails: it is neither a
// round nor a final result (the go-sdk path cannot decode it either).
func rawMoreInput(res json.RawMessage) (in rawInputs, more bool, err error) {
	if !bytes.Contains(res, []byte(`"inputRequests"`)) && !bytes.Contains(res, []byte(`"input_required"`)) {
		return in, false, nil
	}
	if err := json.Unmarshal(res, &in); err != nil {
		return in, false, fmt.Errorf("malformed result: %w", err)
	}
	return in, in.ResultType == resultInputRequired || len(in.InputRequests) > 0, nil
}

// resultInputRequired is a Modern result's resultType when it asks for
// input (2026-07-28; the go-sdk's constant is unexported).
const resultInputRequired = "input_required"

type rawInputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// rounds sends the request (upstream.Core.Do) and, while the backend's
// result still carries inputRequests, asks the client for them on the
// call's stream (as server-to-client requests under vmcp ids) and sends
// the request again, as a new request, with inputResponses and the
// backend's requestState. A Modern session's final result loses its
// 2026-07-28-only members (mcpmsg.LegacyResult).
func (rs *relayStream) rounds(req *upstream.Request, params map[string]json.RawMessage) (json.RawMessage, error) {
	res, modern, err := rs.exchange(req, params)
	for n := 0; err == nil; n++ {
		in, more, merr := rawMoreInput(res)
		if merr != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q: %v", rs.backend, merr)}
		}
		if !more {
			if modern {
				return mcpmsg.LegacyResult(res), nil
			}
			return res, nil
		}
		if n >= maxInputRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q: more than %d input rounds", rs.backend, maxInputRounds)}
		}
		answers, ferr := rs.fulfil(rs.ctx, in.InputRequests)
		if ferr != nil {
			return nil, ferr
		}
		delete(params, "inputResponses")
		if len(answers) > 0 {
			params["inputResponses"], _ = json.Marshal(answers)
		}
		delete(params, "requestState")
		if in.RequestState != "" {
			params["requestState"], _ = json.Marshal(in.RequestState)
		}
		res, modern, err = rs.exchange(req, params)
	}
	return res, err
}

// fulfil asks the client every input request of one round, concurrently,
// and returns the answers keyed as the backend's requests.
func (rs *relayStream) fulfil(ctx context.Context, reqs map[string]rawInputRequest) (map[string]json.RawMessage, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxRelayAsks)
	var mu sync.Mutex
	out := make(map[string]json.RawMessage, len(reqs))
	for id, r := range reqs {
		g.Go(func() error {
			if err := rs.s.undeclaredMethod(r.Method); err != nil {
				return fmt.Errorf("input request %q: %w", id, err)
			}
			res, err := rs.out.request(gctx, r.Method, r.Params)
			if err != nil {
				return fmt.Errorf("input request %q: %w", id, err)
			}
			mu.Lock()
			out[id] = res
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q: %v", rs.backend, err)}
	}
	return out, nil
}
