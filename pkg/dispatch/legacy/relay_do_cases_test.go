package legacy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
)

// relayCase is one relayed tools/call: the backend's script and what the
// client does and sees on the call's stream.
type relayCase struct {
	name    string
	timeout time.Duration // the backend's (0: 30 s)
	caps    string        // the client's capabilities ("": none)
	script  rbScript
	client  func(t *testing.T, h relayHarness, cs *clientStream)
}

// relayHarness is what a case's client step reaches.
type relayHarness struct {
	url, sid string
	rb       *relayBackend
}

// TestRelayOnDo runs the Legacy relay's calls through upstream.Core.Do
// against an in-memory Legacy HTTP backend, one case each: the result,
// progress order, an ask round trip, the client's cancellation reaching
// the backend, the backend timeout and the forgotten-session resend.
func TestRelayOnDo(t *testing.T) {
	t.Parallel()
	for _, c := range relayCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rb, url := startRelayBackend(t, c.script)
			timeout, caps := c.timeout, c.caps
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			if caps == "" {
				caps = "{}"
			}
			vurl, sid := relayVMCP(t, url, timeout, caps)
			h := relayHarness{url: vurl, sid: sid, rb: rb}
			c.client(t, h, startCall(t, vurl, sid))
		})
	}
}

func relayCases() []relayCase {
	return []relayCase{
		{name: "result as a JSON body", script: jsonResult, client: func(t *testing.T, _ relayHarness, cs *clientStream) {
			m := mustNext(t, cs)
			require.JSONEq(t, `1`, string(m.ID))
			require.JSONEq(t, string(rbResult), string(m.Result))
		}},
		{name: "progress in order before the result", script: func(_ *relayBackend, w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
			for i := 1; i <= 5; i++ {
				rbSSE(w, rbProgress("tok", i))
			}
			rbSSE(w, rbProgress("other", 9), wire.Response(m.ID, rbResult))
		}, client: func(t *testing.T, _ relayHarness, cs *clientStream) {
			for i := 1; i <= 5; i++ {
				m := mustNext(t, cs)
				var p struct{ Progress int }
				require.NoError(t, json.Unmarshal(m.Params, &p))
				require.Equal(t, "notifications/progress", m.Method)
				require.Equal(t, i, p.Progress, "progress out of order")
			}
			m := mustNext(t, cs) // another token's progress is dropped
			require.JSONEq(t, `1`, string(m.ID))
			require.JSONEq(t, string(rbResult), string(m.Result))
		}},
		{name: "ask round trip on the call's stream", caps: `{"elicitation":{}}`, script: askThenEcho, client: askClient},
		{name: "client cancellation reaches the backend", script: progressThenBlock, client: func(t *testing.T, h relayHarness, cs *clientStream) {
			require.Equal(t, "notifications/progress", mustNext(t, cs).Method)
			resp := post(t, h.url, h.sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
			require.Equal(t, http.StatusAccepted, resp.StatusCode)
			n := <-h.rb.posted
			require.Equal(t, "notifications/cancelled", n.Method)
			require.Contains(t, string(n.Params), `"vmcp-`, "the backend is told vmcp's id, not the client's")
			m, err := cs.next()
			require.ErrorIs(t, err, io.EOF, "a cancelled call gets no response: %+v", m)
		}},
		{name: "backend timeout is an error naming the backend", timeout: 2 * time.Second, script: progressThenBlock, client: func(t *testing.T, h relayHarness, cs *clientStream) {
			require.Equal(t, "notifications/progress", mustNext(t, cs).Method)
			m := mustNext(t, cs)
			require.JSONEq(t, `1`, string(m.ID))
			require.Contains(t, string(m.Error), `backend \"b\": timed out`)
			require.Equal(t, "notifications/cancelled", (<-h.rb.posted).Method)
		}},
		{name: "forgotten session is resent once on a new one", script: func(rb *relayBackend, w http.ResponseWriter, r *http.Request, m *wire.Message, n int) {
			if n == 1 {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			jsonResult(rb, w, r, m, n)
		}, client: func(t *testing.T, h relayHarness, cs *clientStream) {
			m := mustNext(t, cs)
			require.JSONEq(t, string(rbResult), string(m.Result))
			h.rb.mu.Lock()
			defer h.rb.mu.Unlock()
			require.Len(t, h.rb.calls, 2)
			assert.NotEqual(t, h.rb.calls[0], h.rb.calls[1], "resent on the forgotten session")
		}},
	}
}

func jsonResult(_ *relayBackend, w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(wire.Response(m.ID, rbResult))
}

func progressThenBlock(_ *relayBackend, w http.ResponseWriter, r *http.Request, _ *wire.Message, _ int) {
	rbSSE(w, rbProgress("tok", 1))
	<-r.Context().Done()
}

// askThenEcho asks elicitation/create (id 7) and answers the call with the
// client's answer as it reached the backend.
func askThenEcho(rb *relayBackend, w http.ResponseWriter, r *http.Request, m *wire.Message, _ int) {
	rbSSE(w, wire.Request(json.RawMessage(`7`), "elicitation/create", json.RawMessage(`{"message":"?","requestedSchema":{"type":"object"}}`)))
	select {
	case a := <-rb.posted:
		if string(a.ID) != "7" {
			rbSSE(w, wire.Response(m.ID, json.RawMessage(`{"content":[],"isError":true}`)))
			return
		}
		rbSSE(w, wire.Response(m.ID, a.Result))
	case <-r.Context().Done():
	}
}

// askClient answers the relayed elicitation/create under the id vmcp gave
// it and expects the backend's echo of that answer as the result.
func askClient(t *testing.T, h relayHarness, cs *clientStream) {
	ask := mustNext(t, cs)
	require.Equal(t, "elicitation/create", ask.Method)
	require.True(t, strings.HasPrefix(string(ask.ID), `"vmcp-`), "asked under vmcp's id, got %s", ask.ID)
	answer := `{"action":"accept","content":{"x":1}}`
	resp := post(t, h.url, h.sid, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":`+answer+`}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	m := mustNext(t, cs)
	require.JSONEq(t, `1`, string(m.ID))
	require.JSONEq(t, answer, string(m.Result))
}

func mustNext(t *testing.T, cs *clientStream) *wire.Message {
	t.Helper()
	m, err := cs.next()
	require.NoError(t, err)
	return m
}

// TestLegacyCompletionOnDo: a Legacy client's completion/complete to a
// streamable HTTP backend is sent by upstream.Core.Do (its id is Do's
// "vmcp-u" string, never the go-sdk client's integer) on the client's own
// backend session, and the backend's completion reaches the client.
func TestLegacyCompletionOnDo(t *testing.T) {
	t.Parallel()
	rb, url := startRelayBackend(t, jsonResult)
	vurl, sid := relayVMCP(t, url, 30*time.Second, "{}")
	cs := startRequest(t, vurl, sid, `{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"b_p"},"argument":{"name":"x","value":"a"}}}`)
	m := mustNext(t, cs)
	require.JSONEq(t, `5`, string(m.ID))
	require.Contains(t, string(m.Result), `"alpha"`, "error: %s", m.Error)
	rb.mu.Lock()
	defer rb.mu.Unlock()
	require.Len(t, rb.completions, 1)
	assert.True(t, strings.HasPrefix(rb.completions[0], `"vmcp-u`), "sent with id %s, not by Do", rb.completions[0])
}
