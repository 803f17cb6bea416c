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

// Release hands er back for reuse; neither er nor any data it returned may
// be used after.
func (er *EventReader) Release() {
	er.r.Reset(nil)
	er.src = eofSeen{}
	if cap(er.data) > keptEventData {
		er.data = nil
	}
	er.data = er.data[:0]
	eventReaders.Put(er)
}

// MaxEvent bounds one SSE event's data (the go-sdk client's default
// maximum event size): a larger event fails the read.
const MaxEvent = mcp.DefaultMaxEventSize

// Next returns the next event's data (valid until the next call). At the
// end of the stream it returns io.EOF; an event over MaxEvent bytes fails.
func (er *EventReader) Next() ([]byte, error) {
	er.data = er.data[:0]
	for {
		line, err := er.line()
		if len(er.data)+len(line) > MaxEvent {
			return nil, fmt.Errorf("SSE event exceeds %d bytes", MaxEvent)
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 && len(line) > 0 { // blank line: end of event
			if len(er.data) > 0 {
				return er.data, nil
			}
		} else if v, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
			if len(er.data) > 0 {
				er.data = append(er.data, '\n')
			}
			er.data = append(er.data, bytes.TrimPrefix(v, []byte(" "))...)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(er.data) > 0 { // a last event without its blank line
				return er.data, nil
			}
			return nil, err
		}
	}
}

// line reads one line, gathering a line longer than the buffer whole.
func (er *EventReader) line() ([]byte, error) {
	line, err := er.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	buf := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= MaxEvent {
		line, err = er.r.ReadSlice('\n')
		buf = append(buf, line...)
	}
	return buf, err
}
