package mrtr

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A parked call (the Modern dispatcher parks a backend request's Stream
// in one while its client answers an ask) is cancelled when its park
// timeout passes without a retry, not a moment before: the backend
// request sees ErrParkTimeout, the waiting ask fails, and the round's
// requestState is then refused (ErrNotParked). Fake time: no sleeps.
func TestParkTimeoutCancelsTheParkedCallAtItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 5 * time.Minute
		c := NewCall(context.Background(), NewID(), "legacy")
		asked := make(chan error, 1)
		cleaned := make(chan bool, 1)
		c.Start(func(ctx context.Context) (any, error) {
			_, err := c.Ask(ctx, &mcp.ElicitParams{Message: "delete?"})
			asked <- err
			return nil, context.Cause(ctx)
		}, func(abandoned bool) { cleaned <- abandoned })
		out, err := c.Next(t.Context(), time.Hour)
		require.NoError(t, err)
		require.Len(t, out.Asks, 1)
		round := c.Park(timeout)

		time.Sleep(timeout - time.Nanosecond) // fake time: the bubble's clock
		synctest.Wait()
		select {
		case err := <-asked:
			t.Fatalf("the parked call ended before its park timeout: %v", err)
		default:
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		require.ErrorIs(t, <-asked, ErrParkTimeout, "the waiting ask fails with the park timeout")
		assert.True(t, <-cleaned, "the call was abandoned")
		assert.ErrorIs(t, context.Cause(c.ctx), ErrParkTimeout)
		err = c.Resume(round, mcp.InputResponseMap{}, nil)
		assert.True(t, errors.Is(err, ErrNotParked), "a retry after the timeout is refused: %v", err)
		time.Sleep(drainGrace) // the call's context is released after its drain grace
	})
}
