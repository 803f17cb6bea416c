package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
)

// SessionTag is how a log line names a client session: the first 8 hex
// digits of the SHA-256 of its id ("" for ""). A Legacy Mcp-Session-Id is
// bearer-like (it is all a request needs to act in the session), so log
// lines never print it whole; the tag still tells one session's lines
// from another's. The audit record's session field is its own decision.
func SessionTag(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}
