package wire

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

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

// TestEventReaderAllocatedABufferPerResponse: every direct call and relayed
// request read its response through a fresh 4 KiB buffer; released readers
// are reused (sync.Pool, which under -race drops a quarter of them).
func TestEventReaderAllocatedABufferPerResponse(t *testing.T) {
	payload := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	body := bytes.NewReader(payload)
	read := func() {
		body.Reset(payload)
		er := NewEventReader(body)
		if data, err := er.Next(); err != nil || !bytes.HasPrefix(data, []byte(`{"jsonrpc"`)) {
			t.Fatalf("Next = %q, %v", data, err)
		}
		er.Release()
	}
	read()
	const runs = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		read()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 2048 {
		t.Fatalf("%d bytes allocated per response read; want the released reader reused", per)
	}
}

// TestReleasedEventReaderKeepsNoData: a reader taken after another's
// release starts empty, on its own body.
func TestReleasedEventReaderKeepsNoData(t *testing.T) {
	er := NewEventReader(strings.NewReader("data: first\n\ndata: unread\n\n"))
	if d, _ := er.Next(); string(d) != "first" {
		t.Fatalf("first event %q", d)
	}
	er.Release()
	er = NewEventReader(strings.NewReader("data: second\n\n"))
	defer er.Release()
	if d, err := er.Next(); string(d) != "second" || err != nil {
		t.Fatalf("event after a release = %q, %v; want \"second\"", d, err)
	}
	if _, err := er.Next(); err != io.EOF {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}

// TestEventReaderEndedOnlyAtTheBodysEnd: a direct call closes a response
// body whose reader saw its end instead of draining it in a goroutine of
// its own; a body with more to come must still be drained.
func TestEventReaderEndedOnlyAtTheBodysEnd(t *testing.T) {
	pr, pw := io.Pipe()
	er := NewEventReader(pr)
	defer er.Release()
	go func() { _, _ = pw.Write([]byte("data: 1\n\n")) }()
	_, err := er.Next()
	require.NoError(t, err)
	require.False(t, er.Ended(), "the body is still open")

	// an HTTP body returns io.EOF with its last bytes when they came together
	done := NewEventReader(iotest.DataErrReader(strings.NewReader("data: 1\n\n")))
	defer done.Release()
	_, err = done.Next()
	require.NoError(t, err)
	require.True(t, done.Ended(), "the body was read to its end with the event")
	_ = pw.Close()
}

// Event keeps every field, and AppendEvent writes an event Event reads
// back the same; an event ended by the stream instead of its blank line is
// reported Cut.
func TestEventRoundTripsThroughAppendEvent(t *testing.T) {
	stream := ": ping\n\nid: 0_1\ndata: \n\nevent: message\nid: 0_2\nretry: 50\ndata: {\"a\":\ndata: 1}\n\nid: 0_3\ndata: {\"ha"
	er := NewEventReader(strings.NewReader(stream))
	defer er.Release()
	var out []byte
	var cut []bool
	for {
		ev, err := er.Event()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		out = AppendEvent(out, ev)
		cut = append(cut, er.Cut())
	}
	require.Equal(t, "id: 0_1\ndata: \n\nevent: message\nid: 0_2\nretry: 50\ndata: {\"a\":\ndata: 1}\n\nid: 0_3\ndata: {\"ha\n\n", string(out))
	require.Equal(t, []bool{false, false, true}, cut)
}

// A limit set with Limit bounds an event's data lines together, not
// each line alone.
func TestEventReaderLimitBoundsAWholeEvent(t *testing.T) {
	er := NewEventReader(strings.NewReader(strings.Repeat("data: 0123456789\n", 20) + "\n"))
	defer er.Release()
	er.Limit(100)
	_, err := er.Next()
	require.ErrorIs(t, err, ErrEventTooLarge)
	require.ErrorContains(t, err, "100 bytes")
}
