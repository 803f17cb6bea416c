package audit

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultQueue is how many records wait for the writer before new ones
// are dropped.
const DefaultQueue = 4096

// Options configure a Log.
type Options struct {
	Path      string   // the file, appended to (created 0600)
	Arguments bool     // write tools/call and prompts/get arguments (redacted, capped)
	Redact    []string // argument keys whose values are replaced, at any depth: a key containing one, both normalised (Normalize)
	Queue     int      // records waiting for the writer; 0: DefaultQueue
	Logger    *slog.Logger
	// Registerer receives vmcp_audit_records_dropped_total and
	// vmcp_audit_write_errors_total (nil: not registered).
	Registerer prometheus.Registerer
	// Open opens the file (nil: os.OpenFile for appending); tests inject
	// a writer that fails or blocks.
	Open func(path string) (io.WriteCloser, error)
	// Now is the clock of the rate-limited logs (nil: time.Now).
	Now func() time.Time
}

// Log is an open audit log. Write never blocks; one writer goroutine,
// owned by the Log and ended by Close, encodes and writes the records.
// A nil *Log writes nothing.
type Log struct {
	opts    Options
	redact  redactor
	queue   chan *Record
	reopen  chan chan error
	closing chan struct{}
	done    chan struct{}
	once    sync.Once

	dropped, failed  prometheus.Counter
	dropLog, failLog *limited
}

// Open opens the audit log at opts.Path and starts its writer; the file
// is opened now, so a path that cannot be written fails here.
func Open(opts Options) (*Log, error) {
	if opts.Open == nil {
		opts.Open = openFile
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	f, err := opts.Open(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	l := &Log{opts: opts, redact: newRedactor(opts.Redact), queue: make(chan *Record, opts.Queue),
		reopen: make(chan chan error), closing: make(chan struct{}), done: make(chan struct{}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "vmcp_audit_records_dropped_total",
			Help: "Audit records dropped because the audit log's queue was full (the writer fell behind)."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "vmcp_audit_write_errors_total",
			Help: "Failed writes (and reopens) of the audit log file; the records of a failed write are lost."}),
	}
	l.dropLog = newLimited(opts.Now, opts.Logger, "audit log: queue full, records dropped")
	l.failLog = newLimited(opts.Now, opts.Logger, "audit log: write failed, records lost")
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(l.dropped, l.failed)
	}
	go l.run(f)
	return l, nil
}

func openFile(path string) (io.WriteCloser, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

// Arguments reports whether records should carry arguments.
func (l *Log) Arguments() bool { return l != nil && l.opts.Arguments }

// Write queues r for the writer; with the queue full (or the Log closed)
// r is dropped and counted, never waited for. r must not be changed after.
func (l *Log) Write(r *Record) {
	if l == nil {
		return
	}
	select {
	case <-l.closing:
		return
	default:
	}
	clip(r)
	select {
	case l.queue <- r:
	default:
		l.dropped.Inc()
		l.dropLog.add(1, nil)
	}
}

// Reopen closes the file and opens its path again (log rotation: the old
// file was renamed), after the records queued before it are written. On
// an error the old file stays in use.
func (l *Log) Reopen() error {
	if l == nil {
		return nil
	}
	reply := make(chan error, 1)
	select {
	case l.reopen <- reply:
		return <-reply
	case <-l.done:
		return nil
	}
}

// Close writes the records queued, closes the file and ends the writer.
// Records written after Close are dropped silently.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.once.Do(func() { close(l.closing) })
	<-l.done
	return nil
}

// FlushDelay is how long a record may wait in the writer's buffer for
// others to share its write (one write per FlushDelay at most under load).
const FlushDelay = 10 * time.Millisecond

// run is the writer goroutine: it encodes each record as one line,
// writes what it buffered FlushDelay after the first record of a batch
// (or when the buffer fills), and serves Reopen, until Close.
func (l *Log) run(f io.WriteCloser) {
	defer close(l.done)
	w := bufio.NewWriterSize(f, 64<<10)
	enc := &encoder{w: w}
	tick := time.NewTimer(FlushDelay)
	tick.Stop()
	defer tick.Stop()
	pending := false // a flush is due when tick fires
	for {
		select {
		case r := <-l.queue:
			l.encode(enc, r)
			if !pending {
				pending = true
				tick.Reset(FlushDelay)
			}
		case <-tick.C:
			pending = false
			l.flush(w, f)
		case reply := <-l.reopen:
			l.drain(enc)
			l.flush(w, f)
			f = l.swap(f, reply)
			w.Reset(f)
		case <-l.closing:
			l.drain(enc)
			l.flush(w, f)
			if err := f.Close(); err != nil {
				l.fail(err)
			}
			return
		}
	}
}

// drain encodes every record already queued.
func (l *Log) drain(enc *encoder) {
	for {
		select {
		case r := <-l.queue:
			l.encode(enc, r)
		default:
			return
		}
	}
}

// encoder writes records as lines into w, reusing its buffer.
type encoder struct {
	w   io.Writer
	buf []byte
}

// encode writes r as one line (its arguments redacted and capped).
func (l *Log) encode(enc *encoder, r *Record) {
	if len(r.Arguments) > 0 {
		r.Arguments, r.Truncated = l.redact.arguments(r.Arguments)
	}
	enc.buf = appendLine(enc.buf[:0], r)
	if _, err := enc.w.Write(enc.buf); err != nil {
		l.fail(err)
	}
}

// flush writes what is buffered; a failure loses it (the buffer is reset
// so later records are written).
func (l *Log) flush(w *bufio.Writer, f io.Writer) {
	if err := w.Flush(); err != nil {
		l.fail(err)
		w.Reset(f)
	}
}

// swap opens the path again and closes old; on failure old stays.
func (l *Log) swap(old io.WriteCloser, reply chan<- error) io.WriteCloser {
	f, err := l.opts.Open(l.opts.Path)
	if err != nil {
		l.fail(err)
		reply <- fmt.Errorf("audit log: reopening: %w", err)
		return old
	}
	if err := old.Close(); err != nil {
		l.fail(err)
	}
	reply <- nil
	return f
}

// fail counts a failed write, open or close and logs it, rate-limited.
func (l *Log) fail(err error) {
	l.failed.Inc()
	l.failLog.add(1, err)
}
