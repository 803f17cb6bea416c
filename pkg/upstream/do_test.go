package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// TestDo runs one request through Core.Do against a scripted backend of
// either revision and checks what its Stream yields and how it is counted.
func TestDo(t *testing.T) {
	t.Parallel()
	for _, tc := range doCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runDoCase(t, tc)
		})
	}
}

// doCase is one TestDo case: a backend script and what the Stream yields.
type doCase struct {
	name    string
	modern  bool
	script  script
	notes   int    // notifications expected before the result
	errText string // the error expected instead of a result ("" for a result)
	outcome string
	calls   int // tools/calls the backend got
}

func doCases() []doCase {
	return []doCase{
		{name: "JSON result, Legacy session", script: func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wire.Response(m.ID, okResult))
		}, outcome: "ok", calls: 1},
		{name: "JSON result, Modern backend", modern: true, script: func(w http.ResponseWriter, r *http.Request, m *wire.Message, _ int) {
			if r.Header.Get("Mcp-Method") != "tools/call" || r.Header.Get("Mcp-Name") != "t" || !strings.Contains(string(m.Params), `"io.modelcontextprotocol/protocolVersion"`) {
				http.Error(w, "missing Modern headers or _meta", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wire.Response(m.ID, okResult))
		}, outcome: "ok", calls: 1},
		{name: "SSE progress then result", script: func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
			writeSSE(w, progress("p1", 1), progress("p1", 2), wire.Notification("notifications/message", json.RawMessage(`{"level":"info","data":"x"}`)), wire.Response(m.ID, okResult))
		}, notes: 3, outcome: "ok", calls: 1},
		{name: "response to another id fails at once naming the backend", script: func(w http.ResponseWriter, r *http.Request, _ *wire.Message, _ int) {
			writeSSE(w, wire.Response(json.RawMessage(`"other"`), okResult))
			<-r.Context().Done() // never ends: the request must fail without waiting
		}, errText: `backend "b" answered tools/call (id `, outcome: "error", calls: 1},
		{name: "null result is an error", script: func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wire.Response(m.ID, json.RawMessage(`null`)))
		}, errText: `backend "b"`, outcome: "error", calls: 1},
		{name: "backend JSON-RPC error", script: func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
			writeSSE(w, wire.ErrorResponse(m.ID, errors.New("boom")))
		}, errText: `backend "b": boom`, outcome: "error", calls: 1},
		{name: "forgotten session is reopened and the request sent once more", script: func(w http.ResponseWriter, _ *http.Request, m *wire.Message, n int) {
			if n == 1 {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wire.Response(m.ID, okResult))
		}, outcome: "ok", calls: 2},
	}
}

// runDoCase runs tc's request through Do and checks what it yields.
func runDoCase(t *testing.T, tc doCase) {
	sb := startScripted(t, tc.modern, tc.script)
	c, m, _ := core(t, sb.URL, 30*time.Second)
	st, err := c.Do(context.Background(), call("alice"))
	var notes []upstream.Message
	var res json.RawMessage
	if err == nil {
		notes, res, err = drain(t, st)
		st.Close()
		st.Wait()
	}
	switch {
	case tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
		t.Fatalf("error = %v, want one containing %q", err, tc.errText)
	case tc.errText == "" && err != nil:
		t.Fatalf("Do: %v", err)
	case tc.errText == "" && string(res) != string(okResult):
		t.Fatalf("result = %s", res)
	}
	if len(notes) != tc.notes {
		t.Fatalf("%d notifications, want %d", len(notes), tc.notes)
	}
	if got := outcome(m, tc.outcome); got != 1 {
		t.Fatalf("outcome %q counted %v times, want 1", tc.outcome, got)
	}
	if s := sb.sessions(); len(s) != tc.calls {
		t.Fatalf("backend got %d tools/calls, want %d", len(s), tc.calls)
	} else if tc.calls == 2 && s[0] == s[1] {
		t.Fatalf("resent on the forgotten session %q", s[0])
	}
}
