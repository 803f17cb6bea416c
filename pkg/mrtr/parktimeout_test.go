package mrtr

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resumeAtTheTimeout parks a call for d, resumes it about when its park
// timeout fires, and reports whether the retry was accepted (the backend
// got its answer) and the call then ended by that timeout all the same.
func resumeAtTheTimeout(t *testing.T, d time.Duration) bool {
	c := NewCall(context.Background(), NewID(), "legacy")
	answered := make(chan error, 1)
	c.Start(func(ctx context.Context) (any, error) {
		_, err := c.Ask(ctx, &mcp.ElicitParams{Message: "delete?"})
		answered <- err
		<-ctx.Done() // the backend goes on working after its answer
		return nil, ctx.Err()
	}, func(bool) {})
	defer c.Cancel(errors.New("test over"))
	out, err := c.Next(t.Context(), noIdle)
	if !assert.NoError(t, err) || !assert.Len(t, out.Asks, 1) {
		return false
	}
	var id string
	for k := range out.Asks {
		id = k
	}
	round := c.Park(d)
	time.Sleep(d)
	if c.Resume(round, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept"}}, nil) != nil {
		return false // refused: the timeout came first, nothing delivered
	}
	if <-answered != nil {
		return false
	}
	time.Sleep(time.Millisecond)
	return errors.Is(context.Cause(c.ctx), ErrParkTimeout)
}

// TestResumedCallEndedByItsParkTimeout pins a retry racing its call's park
// timeout: the timer had found the call parked, the retry then claimed it
// and delivered its answers, and the timer cancelled the call (upstream
// too) as if nobody had resumed it.
func TestResumedCallEndedByItsParkTimeout(t *testing.T) {
	var bad atomic.Int32
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 600 {
				if resumeAtTheTimeout(t, time.Duration((i+w)%40)*time.Microsecond) {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, bad.Load(), "resumed calls then ended by their park timeout")
}
