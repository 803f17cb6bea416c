package backends

import (
	"context"
	"time"
)

// drainGrace is how long a finished call's context stays alive so the SDK
// client can drain the rest of the backend's SSE response and keep the HTTP
// connection for reuse (cancelling at once closes it about one call in five).
const drainGrace = 2 * time.Second

// CallContext derives the context of one backend call from the client's
// request context: bounded by timeout, cancelled if the client cancels while
// the call is in flight (the SDK then sends notifications/cancelled), and
// kept alive briefly after done() so the response stream drains.
func CallContext(front context.Context, timeout time.Duration) (ctx context.Context, done func()) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(front), timeout)
	stop := context.AfterFunc(front, cancel)
	return ctx, func() {
		stop()
		time.AfterFunc(drainGrace, cancel)
	}
}
