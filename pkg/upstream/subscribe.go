package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A Legacy client's resource subscriptions (Core.Subscription). On its
// Legacy backend session they are the raw methods; on a Modern one (a
// stateless backend keeps no Legacy session) resources/subscribe is no
// method of its own, so the subscription is a subscriptions/listen for the
// URI that the client session owns (Listens): opened by subscribe, ended by
// unsubscribe or the session's end, its resources/updated delivered to
// that session only. On the shared control connection of a stdio backend
// with isolation: shared at a Modern revision it is refused
// (errSharedModern).

// Listen backoff bounds: a dropped listen is reopened after at least
// listenMinBackoff, doubling to listenMaxBackoff.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 30 * time.Second
)

// errNotHonored: the backend's acknowledgement left out the URI asked.
var errNotHonored = errors.New("backend did not honor the resource subscription")

// Listens are the listen streams one Legacy client session holds for its
// resource subscriptions on Modern backend sessions: each one's goroutine
// ends with unsubscribe, with the owner's context, or at Close.
type Listens struct {
	owner    context.Context
	mu       sync.Mutex
	held     map[listenKey]context.CancelFunc
	sessions *ownSessions // a Modern listen stream's own Legacy backend sessions (ownsession.go)
	closed   bool
	wg       sync.WaitGroup
}

type listenKey struct{ backend, uri string }

// NewListens returns the listens of a client session whose life is owner
// (cancelled when the session ends).
func NewListens(owner context.Context) *Listens {
	return &Listens{owner: owner, held: map[listenKey]context.CancelFunc{}}
}

// Close ends every listen, waits for their goroutines and closes the
// backend sessions held for them.
func (l *Listens) Close() {
	l.mu.Lock()
	for k, stop := range l.held {
		stop()
		delete(l.held, k)
	}
	l.mu.Unlock()
	l.closeOwn() // ends the goroutines keeping them (ownkeep.go)
	l.wg.Wait()
}

// Len is the number of listens held.
func (l *Listens) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// Subscription sends a Legacy client's resources/subscribe or
// resources/unsubscribe (req.Method; req.Name the advertised URI, routed
// to t; req.Sessions the client's) on its own backend session: through
// Do on a Legacy session; on a Modern one, subscribe opens a listen for
// the URI held in l (answered once the backend acknowledged it) whose
// notifications/resources/updated go to deliver, with the advertised
// URI, and to no one else; unsubscribe ends it.
func (c *Core) Subscription(ctx context.Context, req *Request, t Target, l *Listens, deliver func(uri string)) error {
	sess, err := sessionOf(ctx, req.Sessions, t.Backend)
	if err != nil {
		return mcpmsg.WireError(t.Backend.Name(), err)
	}
	if !sess.Modern() {
		return c.raw(ctx, req, t)
	}
	key := listenKey{t.Backend.Name(), t.Name}
	if req.Method == "resources/unsubscribe" {
		l.stop(key)
		return nil
	}
	if cs, ok := sess.(connSession); ok && !cs.Own() {
		return mcpmsg.WireError(t.Backend.Name(), errSharedModern)
	}
	return l.open(ctx, c, req, t, sess, deliver)
}

// errSharedModern refuses a Legacy client's subscription on the one
// process of a stdio backend with isolation: shared that speaks a Modern
// revision: its server keeps one subscription per URI for its one session,
// which every client shares, so no client's own can be held there.
var errSharedModern = errors.New("resources/subscribe cannot be held: the backend runs one process for all clients (isolation: shared) and speaks a Modern revision, whose server keeps one subscription per URI for that process, not one per client")

// raw sends req (resources/subscribe or unsubscribe of t.Name) through Do
// and waits for its result.
func (c *Core) raw(ctx context.Context, req *Request, t Target) error {
	p, err := json.Marshal(map[string]string{"uri": t.Name})
	if err != nil {
		return err
	}
	req.Target, req.Params = &t, p
	st, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		m, err := st.Next(ctx)
		if err != nil || m.Kind == KindResult {
			return err
		}
	}
}

// stop ends the listen of key, if held.
func (l *Listens) stop(key listenKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stop, ok := l.held[key]; ok {
		stop()
		delete(l.held, key)
	}
}

// open opens the listen of req's URI on sess and holds it (idempotent).
func (l *Listens) open(ctx context.Context, c *Core, req *Request, t Target, sess session, deliver func(string)) error {
	uri := t.Name
	h := &heldListen{c: c, t: t, sess: sess, want: mcp.NotificationSubscriptions{ResourceSubscriptions: []string{uri}}}
	h.onGap = func() { deliver(req.Name) }
	h.onNote = func(method string, params json.RawMessage) {
		var p mcp.ResourceUpdatedNotificationParams
		if method == "notifications/resources/updated" && json.Unmarshal(params, &p) == nil && p.URI == uri {
			deliver(req.Name)
		}
	}
	return l.hold(ctx, listenKey{t.Backend.Name(), uri}, req, h)
}

// hold opens h's listen for req's principal and holds it under key
// (idempotent): answered once the backend acknowledged it, then served by
// a goroutine of l until the key is stopped or l's owner ends.
func (l *Listens) hold(ctx context.Context, key listenKey, req *Request, h *heldListen) error {
	l.mu.Lock()
	defer l.mu.Unlock() // one open at a time per owner: the first's answer decides
	if _, ok := l.held[key]; ok {
		return nil
	}
	if l.owner.Err() != nil {
		return mcpmsg.WireError(h.t.Backend.Name(), fmt.Errorf("session ended: %w", l.owner.Err()))
	}
	lctx, stop := context.WithCancel(identity.With(l.owner, req.Principal))
	h.req = &Request{Method: methodListen, Revision: req.Revision, Principal: req.Principal, Header: req.Header.Clone(), Caps: req.Caps}
	h.req.Params, _ = json.Marshal(&mcp.SubscriptionsListenParams{Notifications: &h.want})
	actx, cancel := context.WithTimeout(ctx, h.t.Backend.Timeout())
	defer cancel()
	s, err := h.openAcked(lctx, actx)
	if err != nil {
		stop()
		return mcpmsg.WireError(h.t.Backend.Name(), err)
	}
	l.held[key] = stop
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		h.serve(lctx, s)
	}()
	return nil
}

// heldListen is one listen a Listens holds on a Modern backend: its
// notifications go to onNote, and onGap runs once a dropped one is
// reopened.
type heldListen struct {
	c      *Core
	req    *Request
	t      Target
	sess   session
	want   mcp.NotificationSubscriptions
	onNote func(method string, params json.RawMessage)
	onGap  func()
}

// openAcked opens the listen (living until lctx ends) and waits (actx)
// for the backend's acknowledgement, which must honor every URI asked.
func (h *heldListen) openAcked(lctx, actx context.Context) (*Stream, error) {
	s, err := h.c.sendOn(lctx, lctx, h.req, h.t, h.sess, h.c.countOnly(lctx, h.req, h.t.Backend.Name()), true)
	if err != nil {
		return nil, err
	}
	for {
		m, err := s.Next(actx)
		if err == nil && m.Kind == KindResult {
			err = backends.ErrListenEnded
		}
		if err == nil && m.Method == "notifications/subscriptions/acknowledged" {
			if err = honors(m.Params, h.want); err == nil {
				return s, nil
			}
		}
		if err != nil {
			s.Close()
			s.Wait()
			return nil, err
		}
	}
}

// honors checks an acknowledgement's params against want's URIs.
func honors(params json.RawMessage, want mcp.NotificationSubscriptions) error {
	var p mcp.SubscriptionsAcknowledgedParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("malformed acknowledgement: %w", err)
	}
	for _, uri := range want.ResourceSubscriptions {
		if !slices.Contains(p.Notifications.ResourceSubscriptions, uri) {
			return fmt.Errorf("%w: %s", errNotHonored, uri)
		}
	}
	return nil
}

// serve hands the listen's notifications to onNote until lctx ends; a
// dropped listen is reopened with backoff, and once reopened the gap is
// covered by onGap (changes may have been missed).
func (h *heldListen) serve(lctx context.Context, s *Stream) {
	backoff := listenMinBackoff
	for {
		h.read(lctx, s)
		s.Close()
		s.Wait()
		for {
			if !sleepCtx(lctx, backoff) {
				return
			}
			backoff = min(backoff*2, listenMaxBackoff)
			actx, cancel := context.WithTimeout(lctx, h.t.Backend.Timeout())
			var err error
			s, err = h.openAcked(lctx, actx)
			cancel()
			if err == nil {
				break
			}
			h.c.log.Warn("backend listen not reopened", "backend", h.t.Backend.Name(), "error", err)
		}
		backoff = listenMinBackoff
		h.onGap()
	}
}

// read hands s's notifications to onNote until s ends.
func (h *heldListen) read(lctx context.Context, s *Stream) {
	for {
		m, err := s.Next(lctx)
		if err != nil || m.Kind == KindResult {
			return
		}
		if m.Kind == KindNotification {
			h.onNote(m.Method, m.Params)
		}
	}
}

// sleepCtx waits d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
