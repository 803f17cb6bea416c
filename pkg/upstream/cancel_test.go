package upstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// TestDoCancelBeforeTheBackendAnswersTellsTheLegacySession: a request
// cancelled while the backend has not begun its answer (no response
// headers yet: a go-sdk server sends none before the handler's first
// message) may still run on the backend, so a Legacy session gets
// notifications/cancelled for it (the relay did; Do failed the POST
// silently, leaving the backend's handler running).
func TestDoCancelBeforeTheBackendAnswersTellsTheLegacySession(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		{name: "client cancels", timeout: 30 * time.Second, cancel: true, want: `backend "b"`},
		{name: "backend timeout", timeout: 200 * time.Millisecond, want: `backend "b": timed out`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			started := make(chan struct{})
			sb := startScripted(t, false, func(_ http.ResponseWriter, r *http.Request, _ *wire.Message, _ int) {
				close(started)
				<-r.Context().Done() // no headers, no message
			})
			cr, _, _ := core(t, sb.URL, c.timeout)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-started
				if c.cancel {
					cancel()
				}
			}()
			st, err := cr.Do(ctx, call("alice"))
			if err == nil {
				st.Close()
				t.Fatal("Do succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			select {
			case n := <-sb.posted:
				if n.Method != "notifications/cancelled" {
					t.Fatalf("backend got %q, want notifications/cancelled", n.Method)
				}
			default:
				t.Fatal("the backend was not told of the cancellation")
			}
		})
	}
}

// TestDoWithdrawnAskRunsTheTimeoutAgain: an ask pauses the backend's
// timeout; when the backend withdraws it (notifications/cancelled, no
// answer due) Stream.Withdrawn runs the timeout again, so a backend that
// then hangs still fails the request naming it (before, the relay's call
// waited for the client's disconnect).
func TestDoWithdrawnAskRunsTheTimeoutAgain(t *testing.T) {
	t.Parallel()
	sb := startScripted(t, false, func(w http.ResponseWriter, r *http.Request, _ *wire.Message, _ int) {
		writeSSE(w, wire.Request(json.RawMessage(`7`), "elicitation/create", json.RawMessage(`{"message":"?"}`)),
			wire.Notification("notifications/cancelled", json.RawMessage(`{"requestId":7}`)))
		<-r.Context().Done()
	})
	c, _, _ := core(t, sb.URL, 300*time.Millisecond)
	st, err := c.Do(context.Background(), call("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		m, err := st.Next(ctx)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), `backend "b": timed out`) {
				t.Fatalf("error %v, want the backend's timeout", err)
			}
			return
		case m.Kind == upstream.KindResult:
			t.Fatal("a result")
		case m.Method == "notifications/cancelled":
			st.Withdrawn()
		}
	}
}
