package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// vmcp's own subscriptions/listen client for Modern streamable-HTTP
// backends. The go-sdk client's listens are fire-and-forget (never
// reopened, their end never reported), so vmcp opens, reads and supervises
// its listen streams itself, sent through the one sender (Sender.Listen:
// pkg/upstream, whose Stream bounds the queue and each event): a dropped stream is reopened with backoff, the
// gap is logged, and once reopened the gap is covered (a catalogue refresh
// for list changes, a resources/updated for a subscribed URI).

// errNotHonored: the backend's acknowledgement left out what vmcp asked.
var errNotHonored = errors.New("backend did not honor the subscription")

// ownListens reports whether vmcp holds its own listen streams on b: a
// streamable-HTTP backend speaking a Modern revision.
func (b *Backend) ownListens(version string) bool {
	return b.isHTTP() && wire.IsModern(version)
}

// superviseListen keeps one listen stream for want open until ctx ends. Its
// first outcome goes to first (if non-nil), and a failed first attempt ends
// it; otherwise every failure is retried with backoff. onGap runs after a
// stream is reopened following a drop.
func (b *Backend) superviseListen(ctx context.Context, want mcp.NotificationSubscriptions, first chan<- error, onGap func()) {
	what := describe(want)
	backoff := b.timing.MinBackoff
	var lost time.Time
	for {
		err := b.listenOnce(ctx, want, func() {
			if first != nil {
				first <- nil
				first = nil
			}
			if !lost.IsZero() {
				b.log.Info("backend listen stream reopened", "listen", what, "gap", time.Since(lost).Round(time.Millisecond))
				lost = time.Time{}
				onGap()
			}
			backoff = b.timing.MinBackoff
		})
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if first != nil {
			first <- err
			return
		}
		if ctx.Err() != nil {
			return
		}
		if lost.IsZero() {
			lost = time.Now()
			b.log.Warn("backend listen stream lost; reopening with backoff", "listen", what, "error", err)
		}
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, b.timing.MaxBackoff)
	}
}

// listenOnce opens one listen stream through the one sender and serves it
// until it ends: list changes request a catalogue refresh, resource
// updates go to the manager. acked runs once the acknowledgement honors
// everything asked.
func (b *Backend) listenOnce(ctx context.Context, want mcp.NotificationSubscriptions, acked func()) error {
	send, err := b.sender(ctx)
	if err != nil {
		return err
	}
	ns, err := send.Listen(ctx, b, want)
	if err != nil {
		return err
	}
	defer ns.Close()
	for {
		method, params, err := ns.Next(ctx)
		if err != nil {
			return err
		}
		if err := b.onListenMessage(method, params, want, acked); err != nil {
			return err
		}
	}
}

// onListenMessage handles one notification read off a listen stream.
func (b *Backend) onListenMessage(method string, params json.RawMessage, want mcp.NotificationSubscriptions, acked func()) error {
	switch method {
	case "notifications/subscriptions/acknowledged":
		var p mcp.SubscriptionsAcknowledgedParams
		if err := json.Unmarshal(params, &p); err != nil {
			return fmt.Errorf("malformed acknowledgement: %w", err)
		}
		for _, uri := range want.ResourceSubscriptions {
			if !slices.Contains(p.Notifications.ResourceSubscriptions, uri) {
				return fmt.Errorf("%w: %s", errNotHonored, uri)
			}
		}
		acked()
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		b.announceChange(method)
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if err := json.Unmarshal(params, &p); err == nil && p.URI != "" {
			b.resourceUpdated(p.URI)
		}
	}
	return nil
}

// describe names a listen for logs.
func describe(n mcp.NotificationSubscriptions) string {
	if len(n.ResourceSubscriptions) > 0 {
		return "resources/updated " + n.ResourceSubscriptions[0]
	}
	return "list_changed"
}
