package cluster

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vmcp/vmcp/pkg/shrink"
)

// memEvents is the single-node session event store, bounded like the Redis
// one (events.go): per session at most maxLen messages, oldest dropped
// first, and at most maxLen streams besides the standalone one, so a
// long-lived session's bookkeeping does not grow with its request count
// (the SDK's MemoryEventStore keeps an entry for every POST stream until
// the session ends). A replay into what was dropped fails with
// mcp.ErrEventsPurged; index -1 replays what is kept and re-bases on it.
type memEvents struct {
	mu       sync.Mutex
	maxLen   int
	sessions map[string]*memSession
	peak     shrink.Peak // of sessions
}

// memSession is one session's kept messages: its streams, the order they
// opened in (oldest first, the standalone one excluded) and, per message
// kept, its stream, oldest first.
type memSession struct {
	streams map[string]*memStream
	order   []string
	fifo    []*memStream
}

// memStream is one SSE stream's kept messages; data[0] has SDK index first.
type memStream struct {
	first int
	data  [][]byte
}

var _ mcp.EventStore = (*memEvents)(nil)

// newMemEvents returns an empty store keeping maxLen messages and streams
// per session (maxLen ≥ 1).
func newMemEvents(maxLen int) *memEvents {
	return &memEvents{maxLen: max(maxLen, 1), sessions: map[string]*memSession{}}
}

// stream returns (session, stream)'s record, creating it; a stream beyond
// maxLen forgets the oldest non-standalone one. Requires e.mu.
func (e *memEvents) stream(session, stream string) (*memSession, *memStream) {
	ss := e.sessions[session]
	if ss == nil {
		ss = &memSession{streams: map[string]*memStream{}}
		e.sessions[session] = ss
	}
	st := ss.streams[stream]
	if st != nil {
		return ss, st
	}
	st = &memStream{}
	ss.streams[stream] = st
	if stream != "" {
		ss.order = append(ss.order, stream)
		if len(ss.order) > e.maxLen {
			e.forget(ss, ss.order[0])
			ss.order = slices.Delete(ss.order, 0, 1)
		}
	}
	return ss, st
}

// forget drops stream id of ss with its messages. Requires e.mu.
func (e *memEvents) forget(ss *memSession, id string) {
	st := ss.streams[id]
	delete(ss.streams, id)
	if st == nil || len(st.data) == 0 {
		return
	}
	ss.fifo = slices.DeleteFunc(ss.fifo, func(s *memStream) bool { return s == st })
}

// Open implements mcp.EventStore: it starts the stream's record.
func (e *memEvents) Open(_ context.Context, session, stream string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stream(session, stream)
	return nil
}

// Append implements mcp.EventStore: data gets the stream's next index; the
// session's oldest message goes once it holds more than maxLen.
func (e *memEvents) Append(_ context.Context, session, stream string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	ss, st := e.stream(session, stream)
	st.data = append(st.data, data)
	ss.fifo = append(ss.fifo, st)
	if len(ss.fifo) > e.maxLen {
		old := ss.fifo[0]
		ss.fifo[0] = nil
		ss.fifo = ss.fifo[1:]
		old.data[0] = nil
		old.data = old.data[1:]
		old.first++
	}
	return nil
}

// After implements mcp.EventStore: the messages of (session, stream) after
// SDK index, or mcp.ErrEventsPurged if any of them is gone. index -1 (a new
// standalone GET) yields what is kept and re-bases the stream on it, as
// the Redis store does, so the indices the SDK numbers from there match.
func (e *memEvents) After(_ context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	data, err := e.after(session, stream, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (e *memEvents) after(session, stream string, index int) ([][]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var st *memStream
	if ss := e.sessions[session]; ss != nil {
		st = ss.streams[stream]
	}
	switch {
	case st == nil && index < 0:
		return nil, nil
	case st == nil:
		return nil, fmt.Errorf("session %s stream %q: %w", session, stream, mcp.ErrEventsPurged)
	case index < 0:
		st.first = 0
		return slices.Clone(st.data), nil
	}
	from := index + 1 - st.first
	if from < 0 {
		return nil, fmt.Errorf("session %s stream %q after %d: %w", session, stream, index, mcp.ErrEventsPurged)
	}
	if from >= len(st.data) {
		return nil, nil
	}
	return slices.Clone(st.data[from:]), nil
}

// SessionClosed implements mcp.EventStore: the session's messages go.
func (e *memEvents) SessionClosed(_ context.Context, session string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	shrink.Delete(&e.sessions, &e.peak, session)
	return nil
}

// held reports how many streams and messages session's record keeps.
func (e *memEvents) held(session string) (streams, messages int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ss := e.sessions[session]; ss != nil {
		return len(ss.streams), len(ss.fifo)
	}
	return 0, 0
}
