package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// A stdio backend process may print more than JSON-RPC on stdout (a
// "Starting..." banner, debug lines); the go-sdk's CommandTransport fails
// the connection on the first such line. vmcp runs the process itself and
// hands the go-sdk an mcp.IOTransport over a filtered stdout: a line that is
// not one complete JSON value starting with '{' or '[' (junk, a banner, a
// message cut short, or one over maxStdioLine) is skipped, counted and
// logged with the backend's name (the first junkBurst lines, then at most
// one a second), so it cannot swallow the messages after it. Stderr lines
// are logged with the backend's name.

// Bounds of stdio logging: junkBurst skipped lines are logged before the
// rate limit applies, logLine bytes of a line at most.
const (
	junkBurst       = 10
	logLine         = 512
	maxStdioLine    = 16 << 20        // bytes of one stdout line (the go-sdk's own frame limit)
	stdioTerminate  = 2 * time.Second // stdin closed → SIGTERM → SIGKILL
	stdioWaitOutput = 2 * time.Second // exec.Cmd.WaitDelay: stderr held by grandchildren
)

// stdioTransport starts one backend process per Connect.
type stdioTransport struct {
	cfg    configStdio
	log    *slog.Logger
	count  prometheus.Counter // skipped stdout lines
	exited func()             // may be nil; runs once the process is ended by Close
}

// configStdio is what a stdio process needs from the backend config.
type configStdio struct {
	name, command string
	args          []string
	env           map[string]string
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := exec.Command(t.cfg.command, t.cfg.args...)
	cmd.Env = os.Environ()
	for k, v := range t.cfg.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = &lineLogger{log: t.log}
	cmd.WaitDelay = stdioWaitOutput
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", t.cfg.command, err)
	}
	out := newJunkFilter(stdout, t.log, t.count)
	w := &process{cmd: cmd, stdin: stdin, exited: t.exited}
	return (&mcp.IOTransport{Reader: io.NopCloser(out), Writer: w}).Connect(ctx)
}

// process is the write side of a stdio backend; Close ends the process as
// the spec's stdio shutdown says: close its stdin, wait, SIGTERM, SIGKILL.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited func() // may be nil
	once   sync.Once
	err    error
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *process) Close() error {
	p.once.Do(func() {
		if p.exited != nil {
			defer p.exited()
		}
		_ = p.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		for _, sig := range []os.Signal{nil, syscall.SIGTERM, os.Kill} {
			if sig != nil {
				_ = p.cmd.Process.Signal(sig)
			}
			select {
			case err := <-done:
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					err = nil // the process's own exit status is not a close failure
				}
				p.err = err
				return
			case <-time.After(stdioTerminate):
			}
		}
		p.err = errors.New("stdio backend process did not exit after SIGKILL")
	})
	return p.err
}

// junkFilter passes through stdout lines that may be JSON-RPC (first
// non-blank byte '{' or '['; blank lines too) and skips the others.
type junkFilter struct {
	src     *bufio.Reader
	log     *slog.Logger
	count   prometheus.Counter
	limit   *rate.Sometimes
	skipped atomic.Int64

	inLine  bool   // the last chunk did not end its line
	pass    bool   // the current line may be JSON-RPC
	line    []byte // the current such line while it spans chunks
	tooLong bool   // the current line is over maxStdioLine
	sample  []byte // the start of the current skipped line
	pending []byte // passed bytes not yet read
	err     error
}

func newJunkFilter(r io.Reader, log *slog.Logger, count prometheus.Counter) *junkFilter {
	return &junkFilter{src: bufio.NewReaderSize(r, 64<<10), log: log, count: count,
		limit: &rate.Sometimes{First: junkBurst, Interval: time.Second}}
}

func (f *junkFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		chunk, err := f.src.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			f.err = err
		}
		f.take(chunk, err == bufio.ErrBufferFull)
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// take handles one chunk of a line; more says the line goes on.
func (f *junkFilter) take(chunk []byte, more bool) {
	if len(chunk) == 0 {
		return
	}
	if !f.inLine {
		t := bytes.TrimLeft(chunk, " \t\r\n")
		f.pass = len(t) == 0 || t[0] == '{' || t[0] == '['
		f.sample, f.line, f.tooLong = f.sample[:0], f.line[:0], false
	}
	f.inLine = more
	if f.pass {
		f.takeJSON(chunk, more)
		return
	}
	if room := logLine - len(f.sample); room > 0 {
		f.sample = append(f.sample, chunk[:min(room, len(chunk))]...)
	}
	if !more {
		f.skip()
	}
}

// takeJSON gathers a line that may be JSON-RPC and passes it on once whole
// if it is one complete JSON value (blank lines too); else it is skipped.
func (f *junkFilter) takeJSON(chunk []byte, more bool) {
	if !more && len(f.line) == 0 && !f.tooLong { // the whole line in one chunk
		f.passLine(chunk)
		return
	}
	if f.tooLong = f.tooLong || len(f.line)+len(chunk) > maxStdioLine; !f.tooLong {
		f.line = append(f.line, chunk...)
	} else if len(f.sample) == 0 {
		f.sample = append(f.sample, f.line[:min(logLine, len(f.line))]...)
	}
	if more {
		return
	}
	if f.tooLong {
		f.skip()
		return
	}
	f.passLine(f.line)
}

// passLine passes b (one whole line) on if it is blank or valid JSON.
func (f *junkFilter) passLine(b []byte) {
	if t := bytes.TrimSpace(b); len(t) == 0 || json.Valid(t) {
		f.pending = b
		return
	}
	f.sample = append(f.sample[:0], b[:min(logLine, len(b))]...)
	f.skip()
}

// skip counts and (rate-limited) logs the skipped line in f.sample.
func (f *junkFilter) skip() {
	n := f.skipped.Add(1)
	f.count.Inc()
	f.limit.Do(func() {
		f.log.Warn("backend stdout line is not JSON-RPC; skipped",
			"line", string(bytes.TrimSpace(f.sample)), "skipped", n)
	})
}

// lineLogger logs each line written to it (a process's stderr) with the
// backend's name; a line is cut at logLine bytes.
type lineLogger struct {
	log     *slog.Logger
	partial []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		line, rest, found := bytes.Cut(p, []byte("\n"))
		p = rest
		if room := logLine - len(l.partial); room > 0 {
			l.partial = append(l.partial, line[:min(room, len(line))]...)
		}
		if !found {
			break
		}
		if s := bytes.TrimRight(l.partial, "\r"); len(s) > 0 {
			l.log.Info("backend stderr", "line", string(s))
		}
		l.partial = l.partial[:0]
	}
	return n, nil
}
