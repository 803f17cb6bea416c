package modern

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// TestCallStreamProgressWrittenAfterItsResult races progress with the
// result on a call's SSE stream: each progress must be delivered before
// the result or counted once as after_end, never written after the result
// (the client has completed the call and drops it, uncounted).
func TestCallStreamProgressWrittenAfterItsResult(t *testing.T) {
	const final = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for i := range 1000 {
		s, w := newTestStream(t, `{"_meta":{"progressToken":"c"}}`)
		after := s.d.opts.Metrics.ProgressDropped.WithLabelValues("b", mcpmsg.DropAfterEnd)
		s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":0}`)) // the response is SSE
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":1}`))
			})
		}
		s.finish(200, []byte(final))
		wg.Wait()
		body := w.Body.String()
		end := strings.Index(body, final)
		delivered := strings.Count(body[:end], `"progress":1`)
		counted := int(testutil.ToFloat64(after))
		if tail := body[end+len(final):]; strings.TrimSpace(tail) != "" {
			t.Fatalf("run %d: written after the result: %q", i, tail)
		}
		if delivered+counted != 4 {
			t.Fatalf("run %d: delivered %v, counted after_end %v", i, delivered, counted)
		}
	}
}
