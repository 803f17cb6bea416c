package backends

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// TestProgressTokensWereProcessWide pins the progress-token counter that
// every server in a process shared: another server's minted token counted
// as this one's late progress (after_end), and tokens depended on what
// other servers (parallel tests) had minted. Each Manager has its own.
func TestProgressTokensWereProcessWide(t *testing.T) {
	t.Parallel()
	a, b := NewManager(nil, nil, nil, "test"), NewManager(nil, nil, nil, "test")
	ta := a.Tokens().Mint()
	assert.Equal(t, ta, b.Tokens().Mint(), "two servers mint the same first token")
	assert.NotSame(t, a.Tokens(), b.Tokens())
	var c mcpmsg.ProgressTokens
	assert.Equal(t, mcpmsg.DropUnknownToken, mcpmsg.DropReason(c.Unmatched(ta)), "another server's token is not this one's late progress")
}

// The versions a discover answer lists pick the newest Legacy revision
// both sides speak.
func TestSupportedListPicksNewestLegacyRevision(t *testing.T) {
	we := &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported", Data: []byte(`{"supported":["2024-11-05","2025-06-18","1999-01-01"]}`)}
	assert.Equal(t, "2025-06-18", newestLegacy(supportedOf(nil, we)))
	assert.Equal(t, "2025-03-26", newestLegacy(supportedOf(&mcp.DiscoverResult{SupportedVersions: []string{"2025-03-26"}}, nil)))
	assert.Empty(t, newestLegacy(supportedOf(nil, errors.New("no data"))))
	assert.Empty(t, newestLegacy([]string{"2026-07-28"}), "a Modern revision is the SDK's own retry")
}
