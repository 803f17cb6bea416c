package cluster

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingHandler counts the log records whose message contains substr.
type countingHandler struct {
	substr string
	n      *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.substr) {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// Once a stream's queue was full, every later message for it logged "its
// client lags too far behind" again until the stream had ended (now up to
// lastChunkTimeout, while its stuck write is waited for): a flood of INFO
// lines per stuck client under a busy backend's log messages.
func TestClusterOwnStreamLaggingClientWasLoggedForEveryLaterMessage(t *testing.T) {
	c, h := unreadStream(t)
	var lags atomic.Int64
	h.own.log = slog.New(countingHandler{substr: "lags too far behind", n: &lags})
	msg := []byte(`{"pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	for range maxQueued/len(msg) + 20 {
		require.NoError(t, c.EventStore().Append(context.Background(), "S", "", msg))
	}
	<-h.done
	require.EqualValues(t, 1, lags.Load(), "one line per stream that lags")
}
