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

// TestDoProgressFloodIsBounded: 5,000 progress notifications reach a
// consumer in order while at most QueueCapacity wait between the backend
// and it.
func TestDoProgressFloodIsBounded(t *testing.T) {
	t.Parallel()
	const n = 5000
	sb := startScripted(t, false, func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
		for i := range n {
			writeSSE(w, progress("p1", i))
		}
		writeSSE(w, wire.Response(m.ID, okResult))
	})
	c, _, _ := core(t, sb.URL, 30*time.Second)
	st, err := c.Do(context.Background(), call("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	notes, _, err := drain(t, st)
	if err != nil || len(notes) != n {
		t.Fatalf("%d notifications, err %v", len(notes), err)
	}
	for i, m := range notes {
		var p struct{ Progress int }
		if json.Unmarshal(m.Params, &p) != nil || p.Progress != i {
			t.Fatalf("notification %d is %s", i, m.Params)
		}
	}
	if hw := c.QueueHighWater(); hw > upstream.QueueCapacity || hw == 0 {
		t.Fatalf("queue high water %d, capacity %d", hw, upstream.QueueCapacity)
	}
}

// TestDoAskAnsweredOnTheSession: a Legacy session's elicitation/create on
// the request's stream is yielded as an ask; Answer posts the client's
// answer on the same backend session, and the result follows.
func TestDoAskAnsweredOnTheSession(t *testing.T) {
	t.Parallel()
	var sb *scripted
	sb = startScripted(t, false, func(w http.ResponseWriter, r *http.Request, m *wire.Message, _ int) {
		writeSSE(w, wire.Request(json.RawMessage(`7`), "elicitation/create", json.RawMessage(`{"message":"?"}`)))
		select {
		case a := <-sb.posted:
			writeSSE(w, wire.Response(m.ID, a.Result))
		case <-r.Context().Done():
		}
	})
	c, _, _ := core(t, sb.URL, 30*time.Second)
	st, err := c.Do(context.Background(), call("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ask, err := st.Next(context.Background())
	if err != nil || ask.Kind != upstream.KindAsk || ask.Method != "elicitation/create" || string(ask.ID) != "7" {
		t.Fatalf("first message %+v, %v", ask, err)
	}
	answer := json.RawMessage(`{"action":"accept","content":{"x":1}}`)
	if err := st.Answer(context.Background(), ask.ID, answer, nil); err != nil {
		t.Fatal(err)
	}
	_, res, err := drain(t, st)
	if err != nil || string(res) != string(answer) {
		t.Fatalf("result %s, %v", res, err)
	}
}

// TestDoCancelTellsTheLegacySession: the client's end cancels the request:
// the backend gets notifications/cancelled for it and the outcome is
// cancelled, not an error.
func TestDoCancelTellsTheLegacySession(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	sb := startScripted(t, false, func(w http.ResponseWriter, r *http.Request, _ *wire.Message, _ int) {
		writeSSE(w, progress("p1", 1))
		close(started)
		<-r.Context().Done()
	})
	c, m, _ := core(t, sb.URL, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := c.Do(ctx, call("alice"))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	st.Wait()
	n := <-sb.posted
	if n.Method != "notifications/cancelled" {
		t.Fatalf("backend got %s, want notifications/cancelled", n.Method)
	}
	if got := outcome(m, "cancelled"); got != 1 {
		t.Fatalf("cancelled counted %v times", got)
	}
}

// TestDoTimeout: a backend that does not answer within its timeout fails
// the request naming the backend; the session is told.
func TestDoTimeout(t *testing.T) {
	t.Parallel()
	sb := startScripted(t, false, func(w http.ResponseWriter, r *http.Request, _ *wire.Message, _ int) {
		<-r.Context().Done()
	})
	c, m, _ := core(t, sb.URL, 300*time.Millisecond)
	st, err := c.Do(context.Background(), call("alice"))
	if err == nil {
		defer st.Close()
		_, _, err = drain(t, st)
	}
	if err == nil || !strings.Contains(err.Error(), `backend "b": timed out`) {
		t.Fatalf("error %v", err)
	}
	if got := outcome(m, "error"); got != 1 {
		t.Fatalf("error counted %v times", got)
	}
}

// TestDoIsolatesPrincipals: two principals' requests to a Legacy backend
// never share a backend session; one principal's do.
func TestDoIsolatesPrincipals(t *testing.T) {
	t.Parallel()
	sb := startScripted(t, false, func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.Response(m.ID, okResult))
	})
	c, _, _ := core(t, sb.URL, 30*time.Second)
	ids := map[string]string{}
	for _, who := range []string{"alice", "bob", "alice"} {
		st, err := c.Do(context.Background(), call(who))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := drain(t, st); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if prev, ok := ids[who]; ok && prev != st.SessionID() {
			t.Fatalf("%s changed backend session", who)
		}
		ids[who] = st.SessionID()
	}
	if ids["alice"] == "" || ids["alice"] == ids["bob"] {
		t.Fatalf("alice and bob share backend session %q", ids["alice"])
	}
}

var _ = errors.New
