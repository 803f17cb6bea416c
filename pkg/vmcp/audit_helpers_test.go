package vmcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/audit"
)

// auditWait bounds how long a test waits for an audit record (a failure
// guard; the wait ends at the write that brings the record).
const auditWait = 20 * time.Second

// auditSink opens the audit log's files (vmcp.Options.AuditOpen) and sees
// every line written to them, in order, as it is written.
type auditSink struct {
	mu      sync.Mutex
	lines   []map[string]any
	partial []byte
	written chan struct{} // a write happened (capacity 1)
}

func newAuditSink() *auditSink { return &auditSink{written: make(chan struct{}, 1)} }

// open opens path for appending, as vmcp does, with every write seen.
func (a *auditSink) open(path string) (io.WriteCloser, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &sinkFile{File: f, a: a}, nil
}

type sinkFile struct {
	*os.File
	a *auditSink
}

func (f *sinkFile) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	f.a.add(b[:n])
	return n, err
}

func (a *auditSink) add(b []byte) {
	a.mu.Lock()
	a.partial = append(a.partial, b...)
	for {
		i := bytes.IndexByte(a.partial, '\n')
		if i < 0 {
			break
		}
		var m map[string]any
		if json.Unmarshal(a.partial[:i], &m) == nil {
			a.lines = append(a.lines, m)
		} else {
			a.lines = append(a.lines, map[string]any{"unparsable": string(a.partial[:i])})
		}
		a.partial = a.partial[i+1:]
	}
	a.mu.Unlock()
	select {
	case a.written <- struct{}{}:
	default:
	}
}

// await returns the first n records that match, once written.
func (a *auditSink) await(t *testing.T, what string, n int, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	timeout := time.NewTimer(auditWait)
	defer timeout.Stop()
	for {
		a.mu.Lock()
		var got []map[string]any
		for _, l := range a.lines {
			if match(l) {
				got = append(got, l)
			}
		}
		all := append([]map[string]any(nil), a.lines...)
		a.mu.Unlock()
		if len(got) >= n {
			return got[:n]
		}
		select {
		case <-a.written:
		case <-timeout.C:
			t.Fatalf("audit log: %d record(s) %s not written; the log has %v", n, what, all)
		}
	}
}

// auditOf matches the records of a request of method on target (tool,
// prompt or URI) at revision.
func auditOf(method, field, target, revision string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["method"] == method && m[field] == target && m["revision"] == revision
	}
}

// checkCommon checks the fields every served record has: its time (RFC
// 3339 UTC with milliseconds, within the test), node, a duration, bytes
// both ways and the client's traceparent.
func checkCommon(t *testing.T, rec map[string]any, start time.Time, node, traceparent string) {
	t.Helper()
	ts, _ := rec["time"].(string)
	at, err := time.Parse(audit.TimeFormat, ts)
	require.NoError(t, err, "time %q", ts)
	assert.True(t, strings.HasSuffix(ts, "Z"), "UTC: %q", ts)
	assert.Len(t, ts, len("2006-01-02T15:04:05.000Z"), "milliseconds: %q", ts)
	assert.False(t, at.Before(start.Truncate(time.Millisecond)), "time %s after the test's start %s", at, start)
	assert.Equal(t, node, rec["node"])
	assert.Greater(t, rec["duration_ms"], 0.0)
	assert.Greater(t, rec["bytes_in"], 0.0)
	assert.Greater(t, rec["bytes_out"], 0.0)
	assert.Equal(t, traceparent, rec["traceparent"])
}

// headers adds a cookie and a traceparent to every request.
type headers struct {
	cookie, traceparent string
	base                http.RoundTripper
}

func (h *headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Cookie", h.cookie)
	r.Header.Set("Traceparent", h.traceparent)
	return h.base.RoundTrip(r)
}
