package integration

// Adversarial relay tests on the wire: ids, bodies, cancellation and
// answers (helpers in relay_raw_helpers_test.go).

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------
// Ids and framing.

// TestRelayIDsOfEveryJSONTypeEchoedExactly pins id mangling: a
// relayed call's response carries the client's id byte for byte, whatever
// its JSON type (strings, including "" and one that looks like vmcp's own
// "vmcp-N" ids, zero, negative, a number beyond float64 precision, and one
// with a fraction), and the backend never sees the client's id.
func TestRelayIDsOfEveryJSONTypeEchoedExactly(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	before := relayed(v, "tools/call")
	ids := []string{`"s"`, `""`, `"vmcp-1"`, `"\u00e9t\u00e9"`, `0`, `-1`, `9007199254740993`, `-9223372036854775808`, `1.5`, `1e3`}
	for _, id := range ids {
		status, msgs := c.post(t, raCallBody(id, "b_echo", `,"arguments":{"text":"x"}`))
		require.Equal(t, http.StatusOK, status, "id %s", id)
		require.Len(t, msgs, 1, "id %s: messages %v", id, msgs)
		assert.Equal(t, id, string(msgs[0].ID), "id %s echoed", id)
		assert.Equal(t, "b/echo:x", msgs[0].text(), "id %s", id)
	}
	assert.Equal(t, float64(len(ids)), relayed(v, "tools/call")-before, "every call relayed")
}

// TestRelayInvalidIDTypesRejected: JSON-RPC ids are strings,
// numbers or null; the go-sdk handler answers any other id (an object, an
// array, a boolean) with 400. The relay must not run the tool.
func TestRelayInvalidIDTypesRejected(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	for _, id := range []string{`{"a":1}`, `[1]`, `true`} {
		status, msgs := c.post(t, raCallBody(id, "b_echo", `,"arguments":{"text":"x"}`))
		ran := slices.ContainsFunc(msgs, func(m raMsg) bool { return m.text() == "b/echo:x" })
		assert.False(t, ran, "id %s: the tool ran (status %d, %v)", id, status, msgs)
		assert.True(t, status == http.StatusBadRequest || len(msgs) == 1 && msgs[0].errorCode() == -32600,
			"id %s: want 400 or -32600, got %d %v", id, status, msgs)
	}
}

// TestRelayMissingVersionTagRejected pins the relay running
// non-JSON-RPC-2.0 messages: without "jsonrpc":"2.0" (missing or "1.0")
// the go-sdk handler refuses the POST with 400, and the tool never runs.
func TestRelayMissingVersionTagRejected(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	for _, body := range []string{
		`{"id":5,"method":"tools/call","params":{"name":"b_echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"1.0","id":5,"method":"tools/call","params":{"name":"b_echo","arguments":{"text":"x"}}}`,
	} {
		status, msgs := c.post(t, body)
		ran := slices.ContainsFunc(msgs, func(m raMsg) bool { return m.text() == "b/echo:x" })
		assert.False(t, ran, "%s: the tool ran (status %d)", body, status)
		assert.Equal(t, http.StatusBadRequest, status, "%s", body)
	}
}

// TestRelayMalformedBodiesFailCleanly pins malformed requests
// slipping through the relay's own decode: truncated JSON, trailing
// a batch (not allowed since 2025-06-18), params of the wrong
// shape, a name that is not a string, a tools/call notification (no id).
// Each fails with a 4xx or a JSON-RPC error and never reaches the backend
// tool; the session stays usable.
func TestRelayMalformedBodiesFailCleanly(t *testing.T) {
	var calls sync.Map
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "count", InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Store(flowArgsOf(req).Marker, true)
			return flowResult("counted"), nil
		})
	})
	v := raVMCP(t, nil, []string{"b_count"}, b)
	c := raConnect(t, v, `{}`)
	bodies := map[string]string{
		"truncated":      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b_count","arguments":{"marker":"truncated"}}`,
		"batch":          `[` + raCallBody("1", "b_count", raMarker("batch")) + `]`,
		"params array":   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["b_count"]}`,
		"name number":    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
		"no params":      `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		"empty":          ``,
		"null":           `null`,
		"string":         `"tools/call"`,
		"id null":        `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"b_count","arguments":{"marker":"id null"}}}`,
		"notification":   `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"b_count","arguments":{"marker":"notification"}}}`,
		"nested garbage": raCallBody("1", "b_count", `,"arguments":{"marker":"nested garbage",}`),
	}
	for name, body := range bodies {
		status, msgs := c.post(t, body)
		ok := status >= 400 && status < 500 || status == http.StatusAccepted && len(msgs) == 0 ||
			len(msgs) == 1 && len(msgs[0].Error) > 0
		assert.True(t, ok, "%s: want 4xx, 202 or a JSON-RPC error, got %d %v", name, status, msgs)
	}
	// One good call: everything before it has been handled.
	status, msgs := c.post(t, raCallBody("2", "b_count", raMarker("good")))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	require.Equal(t, "counted", msgs[0].text())
	calls.Range(func(k, _ any) bool {
		if k != "good" {
			t.Errorf("malformed request %q reached the backend tool", k)
		}
		return true
	})
}

// TestRelayUnknownNameFallsBackToSDK pins the hand-off of
// requests the relay cannot route: an unknown tool, prompt or resource gets
// the go-sdk handler's errors (-32602 naming the tool; resource not found),
// not a relay error, and is not counted as relayed.
func TestRelayUnknownNameFallsBackToSDK(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	before := relayed(v, "tools/call") + relayed(v, "prompts/get") + relayed(v, "resources/read")
	status, msgs := c.post(t, raCallBody("1", "nope", `,"arguments":{}`))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	assert.Equal(t, -32602, msgs[0].errorCode(), "%v", msgs)
	assert.Contains(t, msgs[0].raw, `unknown tool \"nope\"`)
	status, msgs = c.post(t, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"nope"}}`)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	assert.NotEmpty(t, msgs[0].Error)
	status, msgs = c.post(t, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"nope://x"}}`)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	assert.NotEmpty(t, msgs[0].Error)
	assert.Equal(t, before, relayed(v, "tools/call")+relayed(v, "prompts/get")+relayed(v, "resources/read"))
}

// ---------------------------------------------------------------------
// Cancellation, duplicate ids, answers.

// raCancel is the client's notifications/cancelled for a raw request id.
func raCancel(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`
}

// TestRelayCancelStopsBackendAndSendsNoResponse pins a client
// cancellation that stops at vmcp: for string and number ids, the
// client's notifications/cancelled is accepted (202), the backend gets
// notifications/cancelled for vmcp's own id (never the client's), its
// handler's context ends, and the call's stream ends without a response
// (the receiver of a cancellation SHOULD NOT respond).
func TestRelayCancelStopsBackendAndSendsNoResponse(t *testing.T) {
	b, bl, cancels := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	for i, id := range []string{`"c-1"`, `77`, `""`, `-3`} {
		marker := fmt.Sprintf("cancel-%d", i)
		call := c.start(raCallBody(id, "b_block", raMarker(marker)))
		expect(t, bl.started, marker, "backend call started")
		status, msgs := c.post(t, raCancel(id))
		require.Equal(t, http.StatusAccepted, status, "id %s: cancel %v", id, msgs)
		expect(t, bl.done, marker, "backend handler cancelled")
		require.True(t, cancels.rec.await(func(ids []string) bool { return len(ids) > i }), "id %s: backend never got notifications/cancelled", id)
		assert.True(t, strings.HasPrefix(cancels.rec.all()[i], "vmcp-"), "id %s: the backend was told to cancel %q", id, cancels.rec.all()[i])
		for _, m := range call.end(t, "cancelled call") {
			assert.NotEqual(t, "", m.Method, "id %s: a response to a cancelled call: %s", id, m.raw)
		}
	}
	status, msgs := c.post(t, raCallBody("9", "b_echo", `,"arguments":{"text":"after"}`))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	require.Equal(t, "b/echo:after", msgs[0].text())
}

// TestRelayCancelWithEquivalentIDSpelling: "ab" and "a\u0062"
// are the same JSON string, 7 and 7.0 the same number (the go-sdk matches
// both); a cancellation must reach the call whichever spelling it uses.
func TestRelayCancelWithEquivalentIDSpelling(t *testing.T) {
	b, bl, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	for i, ids := range [][2]string{{`"ab"`, `"a\u0062"`}, {`7`, `7.0`}} {
		marker := fmt.Sprintf("spell-%d", i)
		c.start(raCallBody(ids[0], "b_block", raMarker(marker)))
		expect(t, bl.started, marker, "backend call started")
		c.post(t, raCancel(ids[1]))
		select {
		case got := <-bl.done:
			require.Equal(t, marker, got)
		case <-time.After(raWait):
			t.Fatalf("call %s cancelled as %s: the backend call was not cancelled", ids[0], ids[1])
		}
	}
}

// TestRelayDuplicateInFlightIDRefused: the go-sdk handler
// refuses a call whose id is already in flight on the session (400,
// -32600), since a response or cancellation could not tell them apart.
// The relay must not run a second call under the same id.
func TestRelayDuplicateInFlightIDRefused(t *testing.T) {
	b, bl, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	first := c.start(raCallBody("7", "b_block", raMarker("first")))
	expect(t, bl.started, "first", "first call started")
	second := c.start(raCallBody("7", "b_block", raMarker("second")))
	select {
	case m := <-second.msgs:
		assert.NotEmpty(t, m.Error, "the duplicate got %s", m.raw)
	case got := <-bl.started:
		// Show what that does to cancellation before failing.
		c.post(t, raCancel("7"))
		select {
		case done := <-bl.done:
			t.Errorf("the cancel for id 7 cancelled only %q", done)
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("a second call with in-flight id 7 reached the backend (%q)", got)
	case <-time.After(raWait):
		t.Fatal("the duplicate neither failed nor ran")
	}
	c.post(t, raCancel("7"))
	expect(t, bl.done, "first", "the first call cancelled")
	first.end(t, "first call")
}

// TestRelayCancelFromAnotherSessionIgnored pins cancellation
// across sessions: session B cancelling A's request id (the same id in B's
// own numbering) must not cancel A's call; A's call completes once A
// answers its elicitation.
func TestRelayCancelFromAnotherSessionIgnored(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_elicit"}, b)
	a, other := raConnect(t, v, `{"elicitation":{}}`), raConnect(t, v, `{"elicitation":{}}`)
	call := a.start(raCallBody("42", "b_elicit", raMarker("A")))
	ask := call.next(t, "elicitation request")
	require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
	status, _ := other.post(t, raCancel("42"))
	assert.Less(t, status, 500, "B's cancel")
	status, _ = a.post(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"action":"accept","content":{"answer":"from-A"}}}`)
	require.Equal(t, http.StatusAccepted, status)
	resp := call.response(t, "A's call")
	require.Equal(t, "42", string(resp.ID))
	require.Equal(t, "elicited:accept:from-A", resp.text())
}

// TestRelayAnswerFromAnotherSessionIgnored pins answer
// hijacking: session B posting an answer under A's relayed request id
// ("vmcp-N") must not complete A's elicitation; A's own answer does.
func TestRelayAnswerFromAnotherSessionIgnored(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_elicit"}, b)
	a, other := raConnect(t, v, `{"elicitation":{}}`), raConnect(t, v, `{"elicitation":{}}`)
	for i := range 3 {
		call := a.start(raCallBody(fmt.Sprint(i), "b_elicit", raMarker("A")))
		ask := call.next(t, "elicitation request")
		require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
		require.True(t, strings.HasPrefix(string(ask.ID), `"vmcp-`), "relayed id %s", ask.ID)
		answer := func(who string) string {
			return `{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"answer":"from-` + who + `"}}}`
		}
		status, _ := other.post(t, answer("B"))
		assert.Less(t, status, 500, "B's answer")
		status, _ = a.post(t, answer("A"))
		require.Equal(t, http.StatusAccepted, status)
		require.Equal(t, "elicited:accept:from-A", call.response(t, "A's call").text())
		// A second answer to the same request is not an error either.
		status, _ = a.post(t, answer("A-again"))
		assert.Less(t, status, 500, "a late second answer")
	}
}

// TestRelayAnswerWithoutResultOrError: a client response with
// neither result nor error must not leave the backend's request hanging:
// the call must end well before the backend timeout.
func TestRelayAnswerWithoutResultOrError(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_elicit"}, b)
	c := raConnect(t, v, `{"elicitation":{}}`)
	for i, tail := range []string{``} {
		call := c.start(raCallBody(fmt.Sprint(i), "b_elicit", raMarker("A")))
		ask := call.next(t, "elicitation request")
		require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
		status, _ := c.post(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+tail+`}`)
		assert.Less(t, status, 500, "answer %q", tail)
		resp := call.response(t, fmt.Sprintf("the call after the answer %q", tail))
		t.Logf("answer %q: %s", tail, resp.raw)
	}
}
