package integration

// Backend tools of the flows tests. Every tool takes {"marker": string}
// plus its own arguments and puts the marker in everything it sends, so a
// test can tell whose message reached which client.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type flowArgs struct {
	Marker string `json:"marker"`
	N      int    `json:"n"`     // progress notifications, or info logs
	Debug  int    `json:"debug"` // debug logs before each info log
	Tail   bool   `json:"tail"`  // end with one error-level log
}

func flowArgsOf(req *mcp.CallToolRequest) flowArgs {
	var a flowArgs
	if len(req.Params.Arguments) > 0 {
		_ = json.Unmarshal(req.Params.Arguments, &a)
	}
	return a
}

var flowSchema = map[string]any{"type": "object"}

func flowResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func flowFailure(format string, args ...any) *mcp.CallToolResult {
	r := flowResult(format, args...)
	r.IsError = true
	return r
}

// addProgressTool: n progress notifications 1..n with the request's own
// token and the marker as message, then the result at once (no delay).
func addProgressTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		tok := req.Params.GetProgressToken()
		if tok == nil {
			return flowFailure("no progress token"), nil
		}
		for i := 1; i <= a.N; i++ {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(a.N), Message: a.Marker})
			if err != nil {
				return flowFailure("progress %d: %v", i, err), nil
			}
		}
		return flowResult("progressed:%s", a.Marker), nil
	})
}

// addLogTool: n times (debug debug-level logs, then one info log {marker,
// i}), then, with tail, one error-level log {marker, tail: true}.
func addLogTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		log := func(level mcp.LoggingLevel, data map[string]any) error {
			data["marker"] = a.Marker
			data["level"] = string(level)
			return req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "flows", Data: data})
		}
		for i := 1; i <= a.N; i++ {
			for d := range a.Debug {
				if err := log("debug", map[string]any{"i": i, "d": d}); err != nil {
					return flowFailure("log: %v", err), nil
				}
			}
			if err := log("info", map[string]any{"i": i}); err != nil {
				return flowFailure("log: %v", err), nil
			}
		}
		if a.Tail {
			if err := log("error", map[string]any{"tail": true}); err != nil {
				return flowFailure("log: %v", err), nil
			}
		}
		return flowResult("logged:%s", a.Marker), nil
	})
}

// addElicitTool: asks the client (req.Session.Elicit, Legacy backends) with
// the marker as message and returns the answer; an error result says what
// capabilities the backend session saw.
func addElicitTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: a.Marker, RequestedSchema: answerSchema})
		if err != nil {
			return flowFailure("elicit failed: %v (backend saw %s)", err, capsString(req.Session)), nil
		}
		return flowResult("elicited:%s:%v", res.Action, res.Content["answer"]), nil
	})
}

// addSampleTool: samples (req.Session.CreateMessage) with the marker as
// the user message and returns the reply.
func addSampleTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Marker}}},
			MaxTokens: 16,
		})
		if err != nil {
			return flowFailure("sampling failed: %v (backend saw %s)", err, capsString(req.Session)), nil
		}
		tc, _ := res.Content.(*mcp.TextContent)
		if tc == nil {
			return flowFailure("sampling returned %T", res.Content), nil
		}
		return flowResult("sampled:%s", tc.Text), nil
	})
}

// addRootsTool: lists the client's roots (req.Session.ListRoots, Legacy).
func addRootsTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return flowFailure("roots failed: %v", err), nil
		}
		return flowResult("roots:%s", sortedURIs(res.Roots)), nil
	})
}

// addCapsTool: reports the client capabilities the backend session saw.
func addCapsTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return flowResult("%s", capsString(req.Session)), nil
	})
}

// addAskTool (Modern backends): one MRTR round eliciting the marker, with
// requestState "ask:<marker>"; returns the answer.
func addAskTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		if req.Params.RequestState == "" {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: a.Marker, RequestedSchema: answerSchema}},
				RequestState:  "ask:" + a.Marker,
			}, nil
		}
		if req.Params.RequestState != "ask:"+a.Marker {
			return flowFailure("requestState %q for marker %q", req.Params.RequestState, a.Marker), nil
		}
		er, _ := req.Params.InputResponses["q"].(*mcp.ElicitResult)
		if er == nil {
			return flowFailure("no elicitation response: %v", req.Params.InputResponses), nil
		}
		return flowResult("asked:%s:%v", er.Action, er.Content["answer"]), nil
	})
}

// addRootsInputTool (Modern backends): one MRTR round asking for roots.
func addRootsInputTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "" {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}, RequestState: "roots"}, nil
		}
		lr, _ := req.Params.InputResponses["r"].(*mcp.ListRootsResult)
		if lr == nil || req.Params.RequestState != "roots" {
			return flowFailure("bad retry: state %q responses %v", req.Params.RequestState, req.Params.InputResponses), nil
		}
		return flowResult("roots:%s", sortedURIs(lr.Roots)), nil
	})
}

// blocker is a backend tool that blocks until its request's context ends,
// reporting the marker when a call starts and when its context is done.
// release (for t.Cleanup, registered after the backend's) frees calls
// still blocked when a test fails, so the backend can shut down.
type blocker struct {
	started, done chan string
	quit          chan struct{}
	once          sync.Once
}

func newBlocker() *blocker {
	return &blocker{started: make(chan string, 64), done: make(chan string, 64), quit: make(chan struct{})}
}

func (bl *blocker) release() { bl.once.Do(func() { close(bl.quit) }) }

func (bl *blocker) add(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		bl.started <- a.Marker
		select {
		case <-ctx.Done():
		case <-bl.quit:
			return flowFailure("released"), nil
		}
		bl.done <- a.Marker
		return nil, ctx.Err()
	})
}

// expect waits for marker on ch (started or done).
func expect(t *testing.T, ch chan string, marker, what string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != marker {
			t.Fatalf("%s: got marker %q, want %q", what, got, marker)
		}
	case <-flowTimeout():
		t.Fatalf("%s: %q never happened", what, marker)
	}
}

// cancelRecorder is backend receiving middleware recording the request IDs
// of notifications/cancelled.
type cancelRecorder struct {
	rec recorder[string]
}

func (c *cancelRecorder) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/cancelled" {
			if p, ok := req.GetParams().(*mcp.CancelledParams); ok {
				c.rec.add(fmt.Sprint(p.RequestID))
			}
		}
		return next(ctx, method, req)
	}
}

// flowTimeout fires after flowWait.
func flowTimeout() <-chan time.Time { return time.After(flowWait) }
