package transport

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmcp/vmcp/pkg/telemetry"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// logRecords is a slog handler sending every record's message to a channel.
type logRecords chan string

func (c logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (c logRecords) Handle(_ context.Context, r slog.Record) error {
	c <- r.Message
	return nil
}
func (c logRecords) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c logRecords) WithGroup(string) slog.Handler      { return c }

// steadyFor returns a steady transport over base, for a backend that logs
// to the returned channel, and opens one GET on it.
func steadyFor(t *testing.T, base roundTripFunc) (*http.Response, logRecords) {
	t.Helper()
	return steadyIn(t, context.Background(), base)
}

// steadyIn is steadyFor on a connection whose context is parent.
func steadyIn(t *testing.T, parent context.Context, base roundTripFunc) (*http.Response, logRecords) {
	t.Helper()
	logs := make(logRecords, 64)
	steady := Steady{Name: "b", Log: slog.New(logs), Metrics: telemetry.New(), MinBackoff: 5 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, Stable: 50 * time.Millisecond, Attempts: 3, Refresh: func() {}}
	ctx, cancel := context.WithCancel(parent)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://backend/mcp", nil)
	resp, err := SteadyGET(base, steady).RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("steady GET: %v %v", resp, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp, logs
}

func awaitLog(t *testing.T, logs logRecords, want string) {
	t.Helper()
	for {
		select {
		case m := <-logs:
			if m == want {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no log %q", want)
		}
	}
}

// TestGETStreamAttemptsAreBounded: a GET stream that keeps failing is
// reopened StreamAttempts times in all, then left alone.
func TestGETStreamAttemptsAreBounded(t *testing.T) {
	var calls atomic.Int64
	_, logs := steadyFor(t, func(*http.Request) (*http.Response, error) {
		calls.Add(1)
		return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{}, Body: http.NoBody}, nil
	})
	awaitLog(t, logs, "backend GET stream failed too often; not reopened")
	if n := calls.Load(); n != 3 {
		t.Errorf("GET attempts = %d, want 3", n)
	}
}

// TestGETStreamResumesWithLastEventID: a reopened stream sends the last
// event id seen, events reach the client whole, and a 405 ends reopening.
func TestGETStreamResumesWithLastEventID(t *testing.T) {
	var calls atomic.Int64
	lastIDs := make(chan string, 4)
	resp, logs := steadyFor(t, func(r *http.Request) (*http.Response, error) {
		lastIDs <- r.Header.Get("Last-Event-ID")
		if calls.Add(1) > 1 {
			return &http.Response{StatusCode: http.StatusMethodNotAllowed, Header: http.Header{}, Body: http.NoBody}, nil
		}
		body := "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\nid: 8\ndata: {\"half"
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	buf := make([]byte, 256)
	n, err := resp.Body.Read(buf)
	if err != nil || string(buf[:n]) != "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n" {
		t.Fatalf("first read = %q, %v", buf[:n], err)
	}
	awaitLog(t, logs, "backend GET stream not offered; not reopened")
	if first, second := <-lastIDs, <-lastIDs; first != "" || second != "7" {
		t.Errorf("Last-Event-ID sent = %q then %q, want \"\" then \"7\"", first, second)
	}
}

// TestGETStreamForgottenSessionWasNotTold: a backend that forgot a session
// answers its GET stream's reopening 404, and nothing else told the
// session's owner (a session that sends no requests never learned it was
// gone). The owner is now told (WithGone), but only after the stream was
// served: a first 404 is a GET never offered.
func TestGETStreamForgottenSessionWasNotTold(t *testing.T) {
	for _, served := range []bool{true, false} {
		var calls, gone atomic.Int64
		ctx := WithGone(context.Background(), func() { gone.Add(1) })
		resp, logs := steadyIn(t, ctx, func(*http.Request) (*http.Response, error) {
			if served && calls.Add(1) == 1 {
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
					Body: io.NopCloser(strings.NewReader("data: {}\n\n"))}, nil
			}
			return &http.Response{StatusCode: http.StatusNotFound, Header: http.Header{}, Body: http.NoBody}, nil
		})
		if served { // the event is copied to the client's end before the stream is reopened
			if _, err := resp.Body.Read(make([]byte, 64)); err != nil {
				t.Fatalf("reading the served event: %v", err)
			}
		}
		awaitLog(t, logs, "backend GET stream not offered; not reopened")
		want := int64(0)
		if served {
			want = 1
		}
		if n := gone.Load(); n != want {
			t.Errorf("served %v: owner told %d times, want %d", served, n, want)
		}
	}
}
