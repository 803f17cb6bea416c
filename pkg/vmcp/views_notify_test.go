package vmcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Per-principal views beyond lists: list_changed per view, pinned
// retries, listen resource subscriptions.

// notes records, in order, the list_changed notifications a client got.
func notes(ch chan string) *mcp.ClientOptions {
	return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { ch <- "tools" },
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { ch <- "prompts" }}
}

func next(t *testing.T, ch chan string, who string) string {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-time.After(10 * time.Second):
		t.Fatalf("%s got no list_changed", who)
		return ""
	}
}

// list_changed reached every session whatever its view: a tool only the
// admin may see must not tell the user its list changed. A later change
// both see (a prompt) is the first notification the user gets, on both
// revisions (each client's notifications arrive in order).
func TestListChangedReachesOnlyPrincipalsWhoseViewChanged(t *testing.T) {
	idp := authtest.Start(t, audience)
	be := viewsBackend(t)
	v := protectedViews(t, idp, be)
	admin, user := principals(t, idp)
	got := map[string]chan string{}
	for _, who := range []string{"admin", "user"} {
		for rev, version := range revisions {
			token := map[string]string{"admin": admin, "user": user}[who]
			ch := make(chan string, 16)
			got[who+" "+rev] = ch
			_, _, err := connect(t, v.URL, token, version, notes(ch))
			require.NoError(t, err)
		}
	}
	require.Eventually(t, func() bool { return v.Server.ModernListens() == 2 }, 10*time.Second, 5*time.Millisecond,
		"the Modern clients' listen streams are open")

	harness.AddTools(be.Server, "sec9", 1) // alpha_sec90000: the admin's view only
	for rev := range revisions {
		require.Equal(t, "tools", next(t, got["admin "+rev], "admin "+rev))
	}
	addPrompt(be.Server, "pubq") // alpha_pubq: both views
	first := map[string]string{}
	for who, ch := range got {
		first[who] = next(t, ch, who)
	}
	require.Equal(t, map[string]string{"admin legacy": "prompts", "admin modern": "prompts",
		"user legacy": "prompts", "user modern": "prompts"}, first, "the next list_changed after the admin-only change")
	for who, ch := range got {
		require.Empty(t, ch, who)
	}
}

// modernCall is one raw Modern tools/call of name with token and extra
// params; it returns the HTTP status and the decoded reply.
func modernCall(t *testing.T, url, token, name string, extra map[string]any) (int, map[string]any) {
	t.Helper()
	params := map[string]any{"name": name, "_meta": map[string]any{
		mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}}
	for k, v := range extra {
		params[k] = v
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx10(t), http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var msg map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	return resp.StatusCode, msg
}

// A Modern retry pinned by its requestState skips the catalogue lookup:
// the user retrying, with the admin's requestState, a tool hidden from it
// must get the unknown-tool error, not the admin's backend round.
func TestRetryOfAHiddenToolWithAnotherPrincipalsStateIsUnknown(t *testing.T) {
	idp := authtest.Start(t, audience)
	asks := askingBackend(t, "secw")
	v := protectedViews(t, idp, viewsBackend(t), asks.Config())
	admin, user := principals(t, idp)
	status, msg := modernCall(t, v.URL, admin, "mb_secw", nil)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	res := msg["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"], "%v", msg)
	retry := map[string]any{"requestState": res["requestState"],
		"inputResponses": map[string]any{"q": map[string]any{"action": "accept", "content": map[string]any{}}}}

	status, msg = modernCall(t, v.URL, user, "mb_secw", retry)
	require.Equal(t, http.StatusBadRequest, status, "%v", msg)
	e := msg["error"].(map[string]any)
	require.Equal(t, float64(jsonrpc.CodeInvalidParams), e["code"])
	require.Equal(t, `unknown tool "mb_secw"`, e["message"])

	status, msg = modernCall(t, v.URL, admin, "mb_secw", retry)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	require.Contains(t, fmt.Sprint(msg["result"]), "answered", "the admin's own retry completes")
}

// subscribableBackend serves docs://a and can subscribe to it.
func subscribableBackend(t *testing.T) config.Backend {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil }})
	s.AddResource(&mcp.Resource{URI: "docs://a", Name: "a"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "a"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return config.Backend{Name: "docs", URL: hs.URL, Transport: config.TransportStreamableHTTP}
}

// listenAck opens a Modern subscriptions/listen for uri with token and
// returns the notifications its acknowledgement honors.
func listenAck(t *testing.T, url, token, uri string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx10(t))
	defer cancel()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{uri}},
		"_meta":         map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: map[string]any{}}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &m))
			require.Equal(t, "notifications/subscriptions/acknowledged", m["method"], data)
			return m["params"].(map[string]any)["notifications"].(map[string]any)
		}
	}
	t.Fatalf("no acknowledgement (status %d)", resp.StatusCode)
	return nil
}

// A Modern listen must not subscribe a principal to a resource the policy
// hides from it: the acknowledgement honors it for the admin only.
func TestListenDoesNotHonorHiddenResources(t *testing.T) {
	idp := authtest.Start(t, audience)
	v := protectedViews(t, idp, viewsBackend(t), subscribableBackend(t))
	admin, user := principals(t, idp)
	a, _, err := connect(t, v.URL, admin, "2025-11-25", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for r, err := range a.Resources(ctx10(t), nil) {
			if err == nil && r.URI == "docs://a" {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "the docs backend joined the catalogue")
	require.Equal(t, []any{"docs://a"}, listenAck(t, v.URL, admin, "docs://a")["resourceSubscriptions"])
	require.NotContains(t, listenAck(t, v.URL, user, "docs://a"), "resourceSubscriptions")
}

// Before requestState was bound to its principal, another principal that
// may use the same tool could present the state vmcp minted for the first
// one and complete (or read) that principal's round.
func TestAnotherPrincipalsRequestStateIsInvalidParams(t *testing.T) {
	idp := authtest.Start(t, audience)
	asks := askingBackend(t, "pubw")
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}, asks.Config())
	admin, user := principals(t, idp)
	status, msg := modernCall(t, v.URL, admin, "mb_pubw", nil)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	res := msg["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"], "%v", msg)
	retry := map[string]any{"requestState": res["requestState"],
		"inputResponses": map[string]any{"q": map[string]any{"action": "accept", "content": map[string]any{}}}}

	status, msg = modernCall(t, v.URL, user, "mb_pubw", retry)
	require.Equal(t, http.StatusBadRequest, status, "%v", msg)
	e := msg["error"].(map[string]any)
	require.Equal(t, float64(jsonrpc.CodeInvalidParams), e["code"])
	require.Contains(t, e["message"], "another principal")

	status, msg = modernCall(t, v.URL, admin, "mb_pubw", retry)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	require.Contains(t, fmt.Sprint(msg["result"]), "answered", "the owner's own retry completes")
}

// askingBackend is a stateless backend "mb" whose tool name answers
// input_required (one elicitation, requestState "asked") and then
// "answered" on the retry.
func askingBackend(t *testing.T, name string) *harness.Backend {
	return harness.StartBackend(t, "mb", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "q?",
					RequestedSchema: map[string]any{"type": "object"}}}, RequestState: "asked"}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
		})
	})
}
