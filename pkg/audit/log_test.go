package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocked is a file whose writes wait until released; entered receives
// one value per write begun.
type blocked struct {
	bytes.Buffer
	entered chan struct{}
	release chan struct{}
}

func (b *blocked) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Buffer.Write(p)
}

func (b *blocked) Close() error { return nil }

// logs records the messages logged, and how many.
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var count int64
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "count" {
			count = a.Value.Int64()
		}
		return true
	})
	l.msgs = append(l.msgs, r.Message+" count="+strings.Repeat("|", int(count)))
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

func (l *logs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// A writer stuck on its file never blocks Write: with the queue full the
// record is dropped and counted, and the drops are logged once per second
// with their count; the records queued before are written once the file
// takes them.
func TestAuditQueueFullDropsWithoutBlocking(t *testing.T) {
	file := &blocked{entered: make(chan struct{}, 8), release: make(chan struct{})}
	reg := prometheus.NewRegistry()
	h := &logs{}
	now := time.Unix(1000, 0)
	l, err := Open(Options{Path: "x", Queue: 1, Registerer: reg, Logger: slog.New(h), Now: func() time.Time { return now },
		Open: func(string) (io.WriteCloser, error) { return file, nil }})
	require.NoError(t, err)
	l.Write(&Record{Method: "first"})
	<-file.entered                     // the writer holds "first" and is stuck on the file
	l.Write(&Record{Method: "second"}) // queued
	l.Write(&Record{Method: "third"})  // dropped
	l.Write(&Record{Method: "fourth"}) // dropped, logged with the next second
	assert.Equal(t, 2.0, testutil.ToFloat64(l.dropped))
	now = now.Add(time.Second)
	l.Write(&Record{Method: "fifth"})
	assert.Equal(t, 3.0, testutil.ToFloat64(l.dropped))
	assert.Equal(t, []string{"audit log: queue full, records dropped count=|", "audit log: queue full, records dropped count=||"}, h.all(),
		"one log per second, with the drops since the last")
	close(file.release)
	require.NoError(t, l.Close())
	var methods []string
	for line := range strings.Lines(file.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		methods = append(methods, m["method"].(string))
	}
	assert.Equal(t, []string{"first", "second"}, methods)
	n, err := testutil.GatherAndCount(reg, "vmcp_audit_records_dropped_total")
	require.NoError(t, err)
	assert.Equal(t, 1, n, "registered")
}

// failing is a file whose writes fail.
type failing struct{ closed bool }

func (f *failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }
func (f *failing) Close() error              { f.closed = true; return nil }

// A failed write is counted and logged (rate-limited), never returned to
// the request; the next record is written once the file works again.
func TestAuditWriteFailuresAreCountedAndLogged(t *testing.T) {
	h := &logs{}
	now := time.Unix(1000, 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	bad := true
	l, err := Open(Options{Path: path, Logger: slog.New(h), Now: func() time.Time { return now },
		Open: func(p string) (io.WriteCloser, error) {
			if bad {
				return &failing{}, nil
			}
			return openFile(p)
		}})
	require.NoError(t, err)
	l.Write(&Record{Method: "lost"})
	l.Write(&Record{Method: "lost too"})
	bad = false
	require.NoError(t, l.Reopen()) // a barrier: what was queued before is written (and failed)
	failed := testutil.ToFloat64(l.failed)
	assert.GreaterOrEqual(t, failed, 1.0)
	assert.Len(t, h.all(), 1, "logged once within the second")
	assert.Contains(t, h.all()[0], "audit log: write failed")
	l.Write(&Record{Method: "kept"})
	require.NoError(t, l.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"method":"kept"`)
	assert.NotContains(t, string(b), "lost")
}

// Reopen follows a rotation: records after it go to a new file at the
// path, those before it stay in the renamed one.
func TestAuditReopenAfterRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(Options{Path: path})
	require.NoError(t, err)
	l.Write(&Record{Method: "before"})
	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, l.Reopen())
	l.Write(&Record{Method: "after"})
	require.NoError(t, l.Close())
	old, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	cur, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(old), `"method":"before"`)
	assert.NotContains(t, string(old), `"method":"after"`)
	assert.Contains(t, string(cur), `"method":"after"`)
	assert.NotContains(t, string(cur), `"method":"before"`)
}

// A record's line: its fields, time in RFC 3339 UTC with milliseconds,
// anonymous principal, decision and outcome shapes; arguments redacted at
// any depth (keys normalised and matched by containment) and capped at 1 KB.
func TestAuditRecordShapeRedactionAndCap(t *testing.T) {
	var buf bytes.Buffer
	l, err := Open(Options{Path: "x", Redact: []string{"password", "token"},
		Open: func(string) (io.WriteCloser, error) { return nopCloser{&buf}, nil }})
	require.NoError(t, err)
	at := time.Date(2026, 7, 28, 10, 11, 12, 345678901, time.FixedZone("x", 3600))
	l.Write(&Record{Time: at, Node: "n1", Revision: "modern", Method: "tools/call", Tool: "t", Duration: 1500 * time.Microsecond,
		Decision: Decision{Denied: true, By: ByRateLimit, Rule: RuleIndex(2)}, Outcome: Outcome{Code: -32000},
		Arguments: json.RawMessage(`{"a":{"PassWord":"p1","b":[{"token":"t1"},{"X-Auth-Token":"t2"}]},"Pass-Word2":"p2","pass":"keep"}`)})
	l.Write(&Record{Arguments: json.RawMessage(`{"big":"` + strings.Repeat("é", 600) + `"}`)})
	require.NoError(t, l.Close())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	assert.Equal(t, "2026-07-28T09:11:12.345Z", m["time"])
	assert.Equal(t, "anonymous", m["principal"])
	assert.Equal(t, map[string]any{"allowed": false, "by": "rate_limit", "rule": 2.0}, m["decision"])
	assert.Equal(t, -32000.0, m["outcome"])
	assert.Equal(t, 1.5, m["duration_ms"])
	assert.Equal(t, map[string]any{"a": map[string]any{"PassWord": Redacted,
		"b": []any{map[string]any{"token": Redacted}, map[string]any{"X-Auth-Token": Redacted}}}, "Pass-Word2": Redacted, "pass": "keep"}, m["arguments"])
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &m))
	assert.Equal(t, true, m["arguments_truncated"])
	s, _ := m["arguments"].(string)
	assert.LessOrEqual(t, len(s), MaxArguments)
	assert.Greater(t, len(s), MaxArguments-4)
	assert.Equal(t, map[string]any{"allowed": true}, m["decision"])
	assert.Equal(t, "ok", m["outcome"])
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// The line written is what encoding/json gives of the Record (line), for
// every field set and for none.
func TestAuditLineMatchesEncodingJSON(t *testing.T) {
	full := &Record{Time: time.Now(), Node: "n\"1", Principal: Principal{Issuer: "https://idp/é", Subject: "a<b>"},
		Client: &Client{Name: "c\n", Version: "1"}, Revision: "legacy", Session: "s", Listen: "l", HTTP: "POST", Method: "tools/call",
		Tool: "t", Prompt: "p", Resource: "file:///x", Backend: "b", Forwarded: true,
		Decision: Decision{Denied: true, By: ByAuthorization, Rule: RuleIndex(0)}, Outcome: Outcome{Code: 401}, Status: 401,
		Duration: 1234567 * time.Nanosecond, BytesIn: 5, BytesOut: 6, Traceparent: "00-x", Arguments: json.RawMessage(`{"a":[1,"\u00e9"]}`), Truncated: true}
	for _, r := range []*Record{full, {}, {Outcome: Outcome{Cancelled: true}}} {
		want, err := json.Marshal(line{Time: r.Time.UTC().Format(TimeFormat), Record: r, DurationMS: float64(r.Duration.Microseconds()) / 1000})
		require.NoError(t, err)
		got := appendLine(nil, r)
		require.True(t, json.Valid(got), "%s", got)
		var g, w map[string]any
		require.NoError(t, json.Unmarshal(got, &g))
		require.NoError(t, json.Unmarshal(want, &w))
		assert.Equal(t, w, g)
	}
}
