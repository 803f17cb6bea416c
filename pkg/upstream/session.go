package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	bsession "github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// The isolation rule: a backend session is never shared by two
// principals. A Legacy client's requests go on its own client session's
// backend sessions (Request.Sessions). A Modern client's request to a
// Modern HTTP backend needs none (one self-contained POST). A Modern
// client's request to a Legacy HTTP backend goes on a backend session
// keyed by the backend instance, the principal, the capabilities the
// client declared (the backend may ask for exactly those) and the
// backend's forwarded credential: concurrent requests of one key share it,
// nothing of one principal reaches another's.

// Bounds of the keyed backend sessions.
const (
	idleSessions = 30 * time.Second // a set unused this long is closed
	maxSessions  = 4096             // keyed sets held at once
)

// sessions holds the keyed backend sessions of Modern clients.
type sessions struct {
	mgr           *backends.Manager
	undeliverable func(method, backend string, err error)

	mu     sync.Mutex
	sets   map[string]*keyed
	swept  time.Time
	closed bool
	wg     sync.WaitGroup // sets being closed
}

type keyed struct {
	set      *bsession.Set
	used     time.Time
	inflight int
}

func newSessions(mgr *backends.Manager, undeliverable func(method, backend string, err error)) *sessions {
	return &sessions{mgr: mgr, undeliverable: undeliverable, sets: map[string]*keyed{}}
}

// sessionKey is the key of req's backend session on b.
func sessionKey(req *Request, b *backends.Backend) (string, error) {
	caps := []byte("{}")
	if req.AskCaps != nil {
		var err error
		if caps, err = json.Marshal(req.AskCaps); err != nil {
			return "", fmt.Errorf("encoding client capabilities: %w", err)
		}
	}
	return fmt.Sprintf("%s\x00%p\x00%s\x00%s\x00%s", b.Name(), b, req.Principal.Key(), caps, b.Principal(req.Header)), nil
}

// set returns the session.Set of req's key on b, with the request's
// forwarded headers held for the session's own requests (initialize,
// answers, cancellations). release marks the request's end.
func (p *sessions) set(req *Request, b *backends.Backend) (set *bsession.Set, release func(), err error) {
	key, err := sessionKey(req, b)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, backends.ErrSessionClosed
	}
	if now.Sub(p.swept) > idleSessions/2 {
		p.sweep(now)
	}
	k := p.sets[key]
	if k == nil {
		if len(p.sets) >= maxSessions {
			return nil, nil, fmt.Errorf("vmcp holds %d keyed backend sessions, its limit", maxSessions)
		}
		k = &keyed{set: bsession.New(p.mgr, func(b *backends.Backend) backends.SessionOptions {
			return keyedOptions(b, req.AskCaps, p.mgr.Tokens(), p.undeliverable)
		})}
		p.sets[key] = k
	}
	k.used, k.inflight = now, k.inflight+1
	k.set.Forward(req.Header)
	k.set.Bind(req.Principal) // whose token its backend sessions carry (outbound identity)
	return k.set, func() { p.release(k) }, nil
}

// keyedOptions open a keyed session at a Legacy revision with exactly the
// client's declared capabilities (caps; nil: none), its log level raised
// to debug (vmcp filters by each request's level). What reaches the
// session off a request's stream (its GET stream: progress after its call
// ended, logs) belongs to no request: miss counts and logs it.
func keyedOptions(b *backends.Backend, caps *mcp.ClientCapabilities, tokens *mcpmsg.ProgressTokens, miss func(method, backend string, err error)) backends.SessionOptions {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	return backends.SessionOptions{
		Client: &mcp.ClientOptions{Capabilities: caps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}},
		Legacy: true,
		Tap: func(_ context.Context, msg *jsonrpc.Request) {
			err := errors.New("off the stream of any request")
			if msg.Method == mcpmsg.MethodProgress {
				if tok, terr := mcpmsg.TokenOf(msg.Params); terr != nil {
					err = terr
				} else {
					err = tokens.Unmatched(tok)
				}
			}
			miss(msg.Method, b.Name(), err)
		},
		TapLogs: true,
		Init: func(ctx context.Context, cs *mcp.ClientSession) error {
			_ = b.RaiseLogLevel(ctx, cs) // best effort: a backend may refuse
			return nil
		},
	}
}

func (p *sessions) release(k *keyed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k.inflight--
	k.used = time.Now()
}

// sweep closes the sets unused for idleSessions (under mu).
func (p *sessions) sweep(now time.Time) {
	p.swept = now
	for key, k := range p.sets {
		if k.inflight == 0 && now.Sub(k.used) > idleSessions {
			delete(p.sets, key)
			p.wg.Add(1)
			go func() { defer p.wg.Done(); _ = k.set.Close() }()
		}
	}
}

// close closes every keyed set and waits for them; later requests fail.
func (p *sessions) close() {
	p.mu.Lock()
	p.closed = true
	sets := p.sets
	p.sets = map[string]*keyed{}
	p.mu.Unlock()
	for _, k := range sets {
		_ = k.set.Close()
	}
	p.wg.Wait()
}
