package pin

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/vmcp/vmcp/pkg/config"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), "tool definition changed")
}

// A backend redefining many tools at once cannot flood the log: 10 lines
// at once, then one a second; every change is still counted.
func TestManyChangedToolsLogTenLinesThenOneASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncBuffer
		c := newCounter()
		p := New(Options{Mode: config.ToolChangesWarn, Log: slog.New(slog.NewTextHandler(&buf, nil)), Counter: c})
		defer p.Close()
		def := func(v string) []*mcp.Tool {
			var ts []*mcp.Tool
			for i := range 50 {
				ts = append(ts, &mcp.Tool{Name: fmt.Sprint("t", i), Description: v, InputSchema: map[string]any{"type": "object"}})
			}
			return ts
		}
		p.Admit("b", def("v1"))
		p.Admit("b", def("v2"))
		assert.Equal(t, 10, buf.lines())
		time.Sleep(time.Second) // the bubble's fake clock
		p.Admit("b", def("v3"))
		assert.Equal(t, 11, buf.lines())
		assert.Len(t, p.Changes(), 50)
		assert.Equal(t, 100.0, testutil.ToFloat64(c.WithLabelValues("b", OutcomeWarned)))
	})
}
