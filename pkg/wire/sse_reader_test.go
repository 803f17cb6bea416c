package wire

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Events split across data lines, CRLF line ends, comments, other fields,
// lines longer than the read buffer and a last event without its blank
// line must all come out whole.
func TestEventReaderReadsEveryEventWhole(t *testing.T) {
	long := strings.Repeat("x", 10000)
	stream := ": comment\r\nevent: message\r\nid: 1\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"data: " + long + "\n\n" +
		"retry: 5\n\n" + // no data: not an event
		"data: last"
	er := NewEventReader(strings.NewReader(stream))
	var got []string
	for {
		d, err := er.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, string(d))
	}
	require.Equal(t, []string{"{\"a\":\n1}", long, "last"}, got)
}

func TestEventReaderRefusesOversizeEvents(t *testing.T) {
	er := NewEventReader(strings.NewReader("data: " + strings.Repeat("x", MaxEvent+1) + "\n\n"))
	_, err := er.Next()
	require.ErrorContains(t, err, "exceeds")
}
