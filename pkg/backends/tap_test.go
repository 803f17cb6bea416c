package backends

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A tapped stream reads back byte for byte (long lines, CRLF, a last event
// without its blank line), and each tapped message reaches the Tap before
// any byte of the event after it is returned.
func TestTapBodyPassesThroughAndTapsInOrder(t *testing.T) {
	long := strings.Repeat("x", 5000) // longer than the tap's read buffer
	stream := "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"a\",\"progress\":1}}\r\n\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + long + " notifications/progress\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":4,\n" + // a request split over two data lines
		"data: \"method\":\"elicitation/create\",\"params\":{}}\n\n" +
		": comment\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}"
	var got []string
	var read strings.Builder
	tb := &tapBody{
		ctx:  context.Background(),
		src:  bufio.NewReaderSize(strings.NewReader(stream), tapBufSize),
		body: io.NopCloser(nil),
		tap: func(_ context.Context, r *jsonrpc.Request) {
			got = append(got, r.Method+" after "+lastEvent(read.String()))
		},
	}
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
	if read.String() != stream {
		t.Fatalf("stream changed:\n got %q\nwant %q", read.String(), stream)
	}
	want := []string{"notifications/progress after (start)", "elicitation/create after id:3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("taps %q, want %q", got, want)
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
