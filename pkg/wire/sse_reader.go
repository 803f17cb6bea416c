package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EventReader reads the data of each event of a text/event-stream body
// (the SSE framing of streamable HTTP responses): data lines joined by
// "\n", other fields (event, id, retry) and comments skipped.
type EventReader struct {
	r    *bufio.Reader
	src  eofSeen
	data []byte
	max  int // bound of one event's bytes (0: MaxEvent)

	hasData bool // the event being read has a data field
	cut     bool // the last event read ended at the stream's end, not a blank line
}

// eofSeen reads r and records whether r reported io.EOF.
type eofSeen struct {
	r   io.Reader
	eof bool
}

func (e *eofSeen) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) {
		e.eof = true
	}
	return n, err
}

// eventReaders are released EventReaders: a direct call or relayed
// request reads one response stream each, and a 4 KiB buffer per call was
// the largest allocation of a Modern tools/call.
var eventReaders = sync.Pool{New: func() any { return &EventReader{r: bufio.NewReaderSize(nil, 4096)} }}

// keptEventData is the largest event buffer a released EventReader keeps.
const keptEventData = 64 << 10

// NewEventReader reads SSE events from body; Release it when done.
func NewEventReader(body io.Reader) *EventReader {
	er := eventReaders.Get().(*EventReader)
	er.src = eofSeen{r: body}
	er.r.Reset(&er.src)
	return er
}

// Ended reports whether the body has been read to its end (the rest, if
// any, is buffered): closing it then keeps its connection for reuse
// without reading on.
func (er *EventReader) Ended() bool { return er.src.eof }

// Cut reports whether the last event read ended with the stream instead
// of its blank line (it may be missing lines: one that is passed on to a
// resuming reader is dropped instead).
func (er *EventReader) Cut() bool { return er.cut }

// Release hands er back for reuse; neither er nor any data it returned may
// be used after.
func (er *EventReader) Release() {
	er.r.Reset(nil)
	er.src = eofSeen{}
	if cap(er.data) > keptEventData {
		er.data = nil
	}
	er.data = er.data[:0]
	er.max = 0
	eventReaders.Put(er)
}

// MaxEvent bounds one SSE event (the go-sdk client's default maximum
// event size): a larger event fails the read with ErrEventTooLarge.
const MaxEvent = mcp.DefaultMaxEventSize

// ErrEventTooLarge fails a read of an SSE event over the reader's limit
// (the error's text names the limit).
var ErrEventTooLarge = errors.New("SSE event exceeds its size limit")

// Limit lowers the bound of one event's bytes (lines, data and other
// fields) to n (from MaxEvent) until er is released.
func (er *EventReader) Limit(n int) { er.max = n }

// Next returns the next event's data (valid until the next call), skipping
// events without data. At the end of the stream it returns io.EOF; an
// event over the limit fails with ErrEventTooLarge.
func (er *EventReader) Next() ([]byte, error) {
	for {
		var ev mcp.Event
		if err := er.read(&ev, false); err != nil {
			return nil, err
		}
		if len(ev.Data) > 0 {
			return ev.Data, nil
		}
	}
}

// Event returns the next event with its fields (Data valid until the next
// call); comments and blocks of blank lines are skipped. At the end of the
// stream it returns io.EOF; an event over the limit fails with
// ErrEventTooLarge.
func (er *EventReader) Event() (mcp.Event, error) {
	var ev mcp.Event
	err := er.read(&ev, true)
	return ev, err
}

// read reads one event into ev: its data always, its other fields when
// fields is set.
func (er *EventReader) read(ev *mcp.Event, fields bool) error {
	er.data, er.hasData, er.cut = er.data[:0], false, false
	size, seen := 0, false
	for {
		line, err := er.line()
		if size += len(line); size > er.limit() {
			return fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, er.limit())
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 && len(line) > 0 { // blank line: end of event
			if seen {
				ev.Data = er.data
				return nil
			}
			size = 0
		} else {
			seen = er.field(ev, trimmed, fields) || seen
		}
		if err != nil {
			if errors.Is(err, io.EOF) && seen { // a last event without its blank line
				ev.Data, er.cut = er.data, true
				return nil
			}
			return err
		}
	}
}

// field records one line's field in ev (data in er.data); it reports
// whether the line is a field (not a comment).
func (er *EventReader) field(ev *mcp.Event, line []byte, fields bool) bool {
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "": // a comment
		return false
	case "data":
		if er.hasData {
			er.data = append(er.data, '\n')
		}
		er.data, er.hasData = append(er.data, value...), true
	case "event":
		if fields {
			ev.Name = internName(value)
		}
	case "id":
		if fields {
			ev.ID = string(value)
		}
	case "retry":
		if fields {
			ev.Retry = string(value)
		}
	}
	return true
}

// internName returns an event name, without allocating for "message".
func internName(b []byte) string {
	if string(b) == "message" {
		return "message"
	}
	return string(b)
}

// limit is the bound of one event's bytes.
func (er *EventReader) limit() int {
	if er.max > 0 {
		return er.max
	}
	return MaxEvent
}

// line reads one line, gathering a line longer than the buffer whole (up to
// just over the limit).
func (er *EventReader) line() ([]byte, error) {
	line, err := er.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	buf := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= er.limit() {
		line, err = er.r.ReadSlice('\n')
		buf = append(buf, line...)
	}
	return buf, err
}

// AppendEvent appends ev as one SSE event: its event, id and retry fields
// when set, then its data (a line break in Data starts another data line;
// one empty data line for none) and the blank line that ends it.
func AppendEvent(dst []byte, ev mcp.Event) []byte {
	if ev.Name != "" {
		dst = append(append(append(dst, "event: "...), ev.Name...), '\n')
	}
	if ev.ID != "" {
		dst = append(append(append(dst, "id: "...), ev.ID...), '\n')
	}
	if ev.Retry != "" {
		dst = append(append(append(dst, "retry: "...), ev.Retry...), '\n')
	}
	if len(ev.Data) == 0 {
		dst = append(dst, "data: \n"...)
	}
	for line := range bytes.Lines(ev.Data) {
		dst = append(append(dst, "data: "...), bytes.TrimRight(line, "\r\n")...)
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}

// AppendComment appends an SSE comment line with text and a blank line (a
// keep-alive, or a stream's priming comment); text holds no line break.
func AppendComment(dst []byte, text string) []byte {
	return append(append(append(dst, ": "...), text...), "\n\n"...)
}
