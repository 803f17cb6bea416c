package vmcp_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
)

// Bob presenting Alice's Legacy session id is refused (403) before
// anything is served; the audit record says so: denied by the session
// owner check, Bob's principal, and none of Alice's clientInfo.
// Regression: the record was {"allowed": true} with Alice's client name
// and version.
func TestAuditRecordedForeignSessionRequestAsAllowedWithOwnersClient(t *testing.T) {
	idp := authtest.Start(t, audience)
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	v := auditedVMCP(t, idp, sink, path)
	alice, bob := idp.Token(t, "alice", "mcp:tools"), idp.Token(t, "bob", "mcp:tools")
	lc := auditClient(t, v, alice, "audit-legacy", "1.2", "2025-11-25")

	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = countCall
		}
		resp, _ := raw(t, method, v.URL, bob, lc.ID(), body)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, method)
		rec := sink.await(t, "of bob's "+method+" on alice's session", 1, func(m map[string]any) bool {
			return m["status"] == 403.0 && m["http"] == method
		})[0]
		assert.Equal(t, map[string]any{"allowed": false, "by": "session_owner"}, rec["decision"], method)
		assert.Equal(t, map[string]any{"iss": idp.Issuer(), "sub": "bob"}, rec["principal"], "the requesting principal")
		assert.Nil(t, rec["client"], "never the session owner's clientInfo")
		assert.Equal(t, lc.ID(), rec["session"], "the session id it presented")
	}
}
