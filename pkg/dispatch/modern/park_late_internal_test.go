package modern

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/mrtr"
)

// TestParkedLateProgressNotDroppedAsAfterEnd pins the failure of
// TestRelayForwardedForeignAndLateProgress (Modern client, Legacy HTTP
// backend) under load: progress the backend sent once the parked call's
// backend request had returned, but before the call's cleanup unbound its
// token (drive had stopped waiting; the client had its response), was
// dropped with no reason, not as after_end. Between rounds (the backend
// request still runs) it stays a drop with no reason.
func TestParkedLateProgressNotDroppedAsAfterEnd(t *testing.T) {
	var reasons []string
	ps := &parkSession{backend: "b", miss: func(_, _ string, err error) { reasons = append(reasons, backends.DropReason(err)) }}
	msg := &jsonrpc.Request{Method: backends.MethodProgress, Params: json.RawMessage(`{"progressToken":"vmcp-progress-late","progress":3}`)}

	call := mrtr.NewCall(context.Background(), "late", "b")
	returned := make(chan struct{})
	call.Start(func(context.Context) (any, error) {
		<-returned // between rounds until then
		return &mcp.CallToolResult{}, nil
	}, func(bool) {})
	ps.bind(call, "vmcp-progress-late") // as park does; no request waiting (out nil)
	ps.notify(context.Background(), msg)
	close(returned)
	<-call.Done() // the backend answered; the cleanup has not run (Next not called)
	ps.notify(context.Background(), msg)
	require.Len(t, reasons, 2)
	assert.Equal(t, "", reasons[0], "between rounds: no reason")
	assert.Equal(t, backends.DropAfterEnd, reasons[1], "after the call's backend request returned")

	out, err := call.Next(context.Background(), time.Minute)
	require.NoError(t, err)
	assert.Nil(t, out.Asks)
}
