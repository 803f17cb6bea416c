package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// vmcp's own subscriptions/listen client for Modern streamable-HTTP
// backends. The go-sdk client's listens are fire-and-forget (never
// reopened, their end never reported), so vmcp opens, reads and supervises
// its listen streams itself: a dropped stream is reopened with backoff, the
// gap is logged, and once reopened the gap is covered (a catalogue refresh
// for list changes, a resources/updated for a subscribed URI).

// errListenEnded: the backend ended the listen with its result (graceful).
var errListenEnded = errors.New("backend ended the listen stream")

// errNotHonored: the backend's acknowledgement left out what vmcp asked.
var errNotHonored = errors.New("backend did not honor the subscription")

// maxListenEvent bounds one SSE event on a listen stream.
const maxListenEvent = 1 << 20

// ownListens reports whether vmcp holds its own listen streams on b: a
// streamable-HTTP backend speaking a Modern revision.
func (b *Backend) ownListens(version string) bool {
	return b.isHTTP() && wire.IsModern(version)
}

// superviseListen keeps one listen stream for want open until ctx ends. Its
// first outcome goes to first (if non-nil), and a failed first attempt ends
// it; otherwise every failure is retried with backoff. onGap runs after a
// stream is reopened following a drop.
func (b *Backend) superviseListen(ctx context.Context, version string, want mcp.NotificationSubscriptions, first chan<- error, onGap func()) {
	what := describe(want)
	backoff := b.timing.MinBackoff
	var lost time.Time
	for {
		err := b.listenOnce(ctx, version, want, func() {
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

// listenOnce opens one listen stream and serves it until it ends: list
// changes request a catalogue refresh, resource updates go to the manager.
// acked runs once the acknowledgement honors everything asked.
func (b *Backend) listenOnce(ctx context.Context, version string, want mcp.NotificationSubscriptions, acked func()) error {
	id := "vmcp-listen-" + strconv.FormatInt(b.ids.listen.Add(1), 10)
	resp, err := b.postListen(ctx, version, id, want)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return scanSSE(resp.Body, func(data []byte) error {
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return fmt.Errorf("malformed message on listen stream: %w", err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if m.Error != nil {
				return m.Error
			}
			return errListenEnded
		case *jsonrpc.Request:
			return b.onListenMessage(m, want, acked)
		}
		return nil
	})
}

// onListenMessage handles one notification read off a listen stream.
func (b *Backend) onListenMessage(m *jsonrpc.Request, want mcp.NotificationSubscriptions, acked func()) error {
	switch m.Method {
	case "notifications/subscriptions/acknowledged":
		var p mcp.SubscriptionsAcknowledgedParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return fmt.Errorf("malformed acknowledgement: %w", err)
		}
		for _, uri := range want.ResourceSubscriptions {
			if !slices.Contains(p.Notifications.ResourceSubscriptions, uri) {
				return fmt.Errorf("%w: %s", errNotHonored, uri)
			}
		}
		acked()
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		b.announceChange(m.Method)
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if err := json.Unmarshal(m.Params, &p); err == nil && p.URI != "" {
			b.resourceUpdated(p.URI)
		}
	}
	return nil
}

// postListen sends the subscriptions/listen POST and returns its SSE
// response; a JSON reply (an error) or a non-2xx status is an error.
func (b *Backend) postListen(ctx context.Context, version, id string, want mcp.NotificationSubscriptions) (*http.Response, error) {
	params := &mcp.SubscriptionsListenParams{Notifications: &want, Meta: mcp.Meta{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         b.info,
	}}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	body := wire.Request(wire.AppendString(nil, id), "subscriptions/listen", p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header["Content-Type"] = jsonContentType
	req.Header["Accept"] = acceptBoth
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, err
	}
	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 == 2 && ct == wire.MediaSSE {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if msg, err := jsonrpc.DecodeMessage(raw); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
			return nil, r.Error
		}
	}
	return nil, fmt.Errorf("subscriptions/listen: HTTP %d (%s)", resp.StatusCode, ct)
}

// scanSSE calls f with the data of each SSE event of r until r ends (an
// unexpected EOF error, since listen streams do not end by themselves),
// f fails, or an event exceeds maxListenEvent (wire.ErrEventTooLarge).
func scanSSE(r io.Reader, f func([]byte) error) error {
	er := wire.NewEventReader(r)
	defer er.Release()
	er.Limit(maxListenEvent)
	for {
		data, err := er.Next()
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		if err := f(data); err != nil {
			return err
		}
	}
}

// describe names a listen for logs.
func describe(n mcp.NotificationSubscriptions) string {
	if len(n.ResourceSubscriptions) > 0 {
		return "resources/updated " + n.ResourceSubscriptions[0]
	}
	return "list_changed"
}
