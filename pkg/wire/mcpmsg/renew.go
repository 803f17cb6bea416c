package mcpmsg

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A backend that restarted forgets its sessions: a request on one gets
// 404 (mcp.ErrSessionMissing) and the go-sdk fails that connection. The
// supervisor reconnects a forgotten control connection at once
// (supervise), without marking the backend down or removing its tools;
// a request the call core sends on a forgotten backend session is sent
// once more on a new one (upstream.Core.Do).

// SessionForgotten reports whether err says the backend no longer knows
// the session the request was sent on (HTTP 404).
func SessionForgotten(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, ErrSessionExpired)
}

// ErrSessionExpired is returned by RawSession.Call when the backend answers
// 404: it no longer knows the backend session (streamable HTTP, session
// management). The session is marked broken; the next Get opens a new one.
var ErrSessionExpired = errors.New("backend session expired (HTTP 404)")
