package transport

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestJunkFilterSkipsNonJSONLines: only lines starting with '{' or '['
// (after blanks) reach the go-sdk, whole, however long; the rest are
// counted and logged, the first junkBurst of them at once.
func TestJunkFilterSkipsNonJSONLines(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"x","params":{"p":"` + strings.Repeat("a", 200<<10) + `"}}`
	var in strings.Builder
	want := ""
	for i := range 30 {
		in.WriteString("Starting server " + strings.Repeat("x", i) + "\n")
		msg := `  {"jsonrpc":"2.0","id":1}` + "\n"
		if i == 7 {
			msg = long + "\n"
		}
		if i == 9 {
			msg = `[{"jsonrpc":"2.0","id":2}]` + "\r\n"
		}
		in.WriteString(msg + "\n")
		want += msg + "\n"
	}
	in.WriteString("trailing junk without newline")
	logs := make(logRecords, 100)
	skipped := prometheus.NewCounter(prometheus.CounterOpts{Name: "skipped"})
	f := newJunkFilter(strings.NewReader(in.String()), slog.New(logs), skipped)
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("passed %d bytes, want %d", len(got), len(want))
	}
	if n := f.skipped.Load(); n != 31 || testutil.ToFloat64(skipped) != 31 {
		t.Errorf("skipped %d lines (counted %v), want 31", n, testutil.ToFloat64(skipped))
	}
	if len(logs) != junkBurst {
		t.Errorf("logged %d skipped lines at once, want the burst of %d", len(logs), junkBurst)
	}
}

// TestLineLoggerLogsEachStderrLine: stderr is logged line by line, across
// writes, with long lines cut.
func TestLineLoggerLogsEachStderrLine(t *testing.T) {
	logs := make(logRecords, 10)
	l := &lineLogger{log: slog.New(logs)}
	for _, w := range []string{"first li", "ne\nsecond\r\n\n", strings.Repeat("z", 2000) + "\n"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if len(logs) != 3 {
		t.Fatalf("logged %d lines, want 3", len(logs))
	}
}

// Regression: a stdout line cut short (`{"jsonrpc":"2.0","id":`) reached
// the go-sdk's decoder, which read on into the next lines: the next two
// responses were lost and a third failed to decode.
func TestTruncatedStdoutLineSwallowedTheResponsesAfterIt(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"unterminated": "` + strings.Repeat("x", 100<<10) + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	skipped := prometheus.NewCounter(prometheus.CounterOpts{Name: "skipped"})
	f := newJunkFilter(strings.NewReader(in), slog.New(slog.DiscardHandler), skipped)
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if string(got) != want {
		t.Fatalf("passed %q, want %q", got, want)
	}
	if n := testutil.ToFloat64(skipped); n != 2 {
		t.Errorf("skipped %v lines, want 2", n)
	}
}
