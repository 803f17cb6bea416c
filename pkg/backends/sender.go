package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sender is the one sender (pkg/upstream's Core, which registers itself
// with Manager.SetSender) as the backends' own subscriptions use it:
// vmcp's listen streams on Modern HTTP backends and the shared resource
// subscriptions (resources.go). backends cannot import upstream, which
// imports it, so the sender is injected.
type Sender interface {
	// Listen opens a subscriptions/listen asking want on b, a Modern
	// backend (streamable HTTP, or its stdio or SSE control connection),
	// and returns what the backend sends on it
	// until ctx ends or the backend ends it.
	Listen(ctx context.Context, b *Backend, want mcp.NotificationSubscriptions) (Notifications, error)
	// Control sends the request method with params on b's control
	// connection (resources/subscribe, resources/unsubscribe) and waits
	// for its result.
	Control(ctx context.Context, b *Backend, method string, params any) error
}

// Notifications is a listen stream as Sender.Listen gives it: the
// backend's notifications, in order, through a bounded queue.
type Notifications interface {
	// Next returns the next notification; ErrListenEnded once the
	// backend answered the listen (it ended it), another error when the
	// stream failed. ctx bounds this wait only.
	Next(ctx context.Context) (method string, params json.RawMessage, err error)
	// Close ends the stream and waits for its reader.
	Close()
}

// ErrListenEnded is Notifications.Next's error once the backend ended the
// listen with its result (graceful).
var ErrListenEnded = errors.New("backend ended the listen stream")

// senderRef is a Manager's Sender, set once (SetSender); the backends'
// subscriptions wait for it (ready, made with the Manager) until their
// context ends.
type senderRef struct {
	once  sync.Once
	ready chan struct{}
	s     Sender
}

// SetSender makes s send the backends' own subscriptions and listens (the
// call core does so when it is built: upstream.New). Later calls are
// ignored.
func (m *Manager) SetSender(s Sender) {
	r := &m.opts.ids.send
	r.once.Do(func() {
		r.s = s
		close(r.ready)
	})
}

// sender is b's Manager's Sender, waiting until it is set or ctx ends.
func (b *Backend) sender(ctx context.Context) (Sender, error) {
	r := &b.ids.send
	select {
	case <-r.ready:
		return r.s, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("backend %q: no sender yet: %w", b.cfg.Name, ctx.Err())
	}
}
