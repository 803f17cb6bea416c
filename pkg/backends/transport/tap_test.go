package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// A tapped stream reads back as the same events (long lines, CRLF, a
// request split over data lines, a last event without its blank line),
// and each tapped message reaches the Tap before any byte of the event
// after it is returned.
func TestTapBodyPassesThroughAndTapsInOrder(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000) // longer than the reader's buffer
	stream := "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"a\",\"progress\":1}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + long + " notifications/progress\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":4,\n" + // a request split over two data lines
		"data: \"method\":\"elicitation/create\",\"params\":{}}\n\n" +
		": comment\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}"
	var got []string
	var read strings.Builder
	tb := newTapBody(context.Background(), io.NopCloser(strings.NewReader(stream)),
		func(_ context.Context, r *jsonrpc.Request) {
			got = append(got, r.Method+" after "+lastEvent(read.String()))
		}, false)
	buf := make([]byte, 700)
	for {
		n, err := tb.Read(buf)
		read.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if in, out := events(t, stream), events(t, read.String()); !reflect.DeepEqual(in, out) {
		t.Fatalf("events changed:\n got %q\nwant %q", out, in)
	}
	want := []string{"notifications/progress after (start)", "elicitation/create after id:3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("taps %q, want %q", got, want)
	}
}

// events reads an SSE stream's events as wire.EventReader sees them.
func events(t *testing.T, stream string) []mcp.Event {
	t.Helper()
	er := wire.NewEventReader(strings.NewReader(stream))
	defer er.Release()
	var out []mcp.Event
	for {
		ev, err := er.Event()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ev.Data = bytes.Clone(ev.Data)
		out = append(out, ev)
	}
}

// xs is an endless SSE event: "data: " then x after x; it counts the
// bytes read from it.
type xs struct{ n int }

func (x *xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
		if x.n+i < 6 {
			p[i] = "data: "[x.n+i]
		}
	}
	x.n += len(p)
	return len(p), nil
}

// The tap gathered a whole SSE event before passing any of it on, however
// large: a backend's endless event grew vmcp's memory without bound. Now
// the event fails the read with wire.ErrEventTooLarge at wire.MaxEvent.
func TestTapSSEEventOverTheLimitWasReadUnbounded(t *testing.T) {
	t.Parallel()
	src := &xs{}
	const past = wire.MaxEvent + 1<<20 // where the test gives up: the tap read past its bound
	body := io.NopCloser(io.LimitReader(src, past))
	base := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {wire.MediaSSE}}, Body: body}, nil
	})
	hc := TapHTTP(&http.Client{Transport: base}, func(context.Context, *jsonrpc.Request) {}, false)
	req := httptest.NewRequest(http.MethodPost, "http://backend/mcp", nil)
	resp, err := hc.Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = resp.Body.Read(make([]byte, 512))
	if !errors.Is(err, wire.ErrEventTooLarge) {
		t.Fatalf("read %d bytes of an endless event, then %v; want wire.ErrEventTooLarge", src.n, err)
	}
	if src.n >= past {
		t.Fatalf("read %d bytes of one event, bound %d", src.n, wire.MaxEvent)
	}
}

// lastEvent names the last complete event returned so far by its JSON-RPC
// id ("(start)" before any).
func lastEvent(s string) string {
	i := strings.LastIndex(s, `"id":`)
	if i < 0 {
		return "(start)"
	}
	return "id:" + s[i+5:i+6]
}
