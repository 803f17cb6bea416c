package backends

import (
	"context"
	"testing"
	"time"
)

// TestLeaveTwiceUncountedAnotherRequest: a request's leave is idempotent,
// so a retired backend still waits for the request that has not left, and
// drains once it has.
func TestLeaveTwiceUncountedAnotherRequest(t *testing.T) {
	b := &Backend{}
	first, second := b.Enter(), b.Enter()
	first()
	first()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the wait ends at once unless b has drained
	if b.drain(ctx, time.Hour) {
		t.Fatal("drained with a request still in flight")
	}
	second()
	if !b.drain(context.Background(), time.Hour) {
		t.Fatal("not drained after every request left")
	}
}
