package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
)

// Pool limits for the backend sessions of calls that may park.
const (
	maxIdlePerKey = 16               // idle sessions kept per (backend, capabilities, principal)
	maxIdleAge    = 30 * time.Second // an idle session older than this is closed, not reused
	closeGrace    = 2 * time.Second  // a session of an abandoned call is closed this much later
)

// sessionPool keeps idle parkSessions per key for reuse. Sessions are
// only shared between calls with the same backend, the same declared
// capabilities and the same principal (backends.Backend.Principal).
type sessionPool struct {
	log    *slog.Logger
	miss   func(method, backend string, err error) // undeliverable messages of parked calls
	stop   chan struct{}                           // closed by close: ends the janitor
	mu     sync.Mutex
	idle   map[string][]*parkSession
	closed bool
	calls  sync.Map // parked call ID → its *parkSession, while the call runs
	// retiring counts the sessions put to be closed after closeGrace
	// (added under mu before closed is set); close waits for them, so
	// none outlives the pool before its backend was told the call ended.
	retiring sync.WaitGroup
}

// track records ps as the session running the parked call id (nil: none).
func (p *sessionPool) track(id string, ps *parkSession) {
	if ps == nil {
		p.calls.Delete(id)
		return
	}
	p.calls.Store(id, ps)
}

// tracked returns the session running the parked call id, or nil.
func (p *sessionPool) tracked(id string) *parkSession {
	ps, _ := p.calls.Load(id)
	s, _ := ps.(*parkSession)
	return s
}

// newSessionPool returns an empty pool and starts its janitor, which
// closes sessions idle beyond maxIdleAge until close.
func newSessionPool(log *slog.Logger, miss func(method, backend string, err error)) *sessionPool {
	p := &sessionPool{log: log, miss: miss, stop: make(chan struct{}), idle: map[string][]*parkSession{}}
	go p.janitor()
	return p
}

func (p *sessionPool) janitor() {
	t := time.NewTicker(maxIdleAge)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			var stale []*parkSession
			for key, list := range p.idle {
				keep := list[:0]
				for _, ps := range list {
					if ps.dead.Load() || time.Since(ps.since) > maxIdleAge {
						stale = append(stale, ps)
					} else {
						keep = append(keep, ps)
					}
				}
				if len(keep) == 0 {
					delete(p.idle, key)
				} else {
					p.idle[key] = keep
				}
			}
			p.mu.Unlock()
			for _, ps := range stale {
				_ = ps.cs.Close()
			}
		}
	}
}

// poolKey is key for backend b: its name and the instance, so that after
// a reload replaces b (a new URL or credentials) the retired instance's
// idle sessions are never handed to calls routed to the new one.
func poolKey(b *backends.Backend, key string) string {
	return fmt.Sprintf("%s\x00%p\x00%s", b.Name(), b, key)
}

// get returns an idle session for key, or opens one on b with caps. ctx
// carries the client's headers (forwarded on the backend's initialize).
func (p *sessionPool) get(ctx context.Context, b *backends.Backend, caps *mcp.ClientCapabilities, key string) (*parkSession, error) {
	key = poolKey(b, key)
	p.mu.Lock()
	var stale []*parkSession
	var got *parkSession
	for list := p.idle[key]; len(list) > 0 && got == nil; list = p.idle[key] {
		ps := list[len(list)-1]
		p.idle[key] = list[:len(list)-1]
		if ps.dead.Load() || time.Since(ps.since) > maxIdleAge {
			stale = append(stale, ps)
			continue
		}
		got = ps
	}
	if len(p.idle[key]) == 0 {
		delete(p.idle, key)
	}
	p.mu.Unlock()
	for _, ps := range stale {
		go ps.cs.Close()
	}
	if got != nil {
		return got, nil
	}
	ps := &parkSession{key: key, caps: caps, backend: b.Name(), miss: p.miss, http: b.HTTP()}
	cs, err := b.Open(context.WithoutCancel(ctx), backends.SessionOptions{
		Client:    &mcp.ClientOptions{Capabilities: caps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}},
		Receiving: []mcp.Middleware{ps.serverRequests},
		Tap:       ps.notify,
		TapLogs:   true,
	})
	if err != nil {
		return nil, err
	}
	if err := b.RaiseLogLevel(ctx, cs); err != nil { // filtered per request (notify)
		p.log.Warn("logging/setLevel debug not applied to a parked call's backend session", "backend", b.Name(), "error", err)
	}
	ps.cs = cs
	go func() { // ends when the session closes (put, close or the backend)
		_ = cs.Wait()
		ps.dead.Store(true)
	}()
	return ps, nil
}

// renew opens a new session for key after its backend forgot one (it
// restarted): the idle sessions of key, opened before, are closed, not
// reused.
func (p *sessionPool) renew(ctx context.Context, b *backends.Backend, caps *mcp.ClientCapabilities, key string) (*parkSession, error) {
	p.mu.Lock()
	stale := p.idle[poolKey(b, key)]
	delete(p.idle, poolKey(b, key))
	p.mu.Unlock()
	for _, ps := range stale {
		go ps.cs.Close()
	}
	return p.get(ctx, b, caps, key)
}

// put returns ps to the pool, or closes it when it must not be reused, the
// pool is full for its key or closed.
func (p *sessionPool) put(ps *parkSession, reuse bool) {
	p.mu.Lock()
	if !reuse {
		owned := !p.closed
		if owned {
			p.retiring.Add(1)
		}
		p.mu.Unlock()
		// Not at once: the SDK client sends notifications/cancelled and
		// the error answers to the backend's pending requests on their own
		// goroutines; closing first could lose them, leaving the backend's
		// handler waiting.
		time.AfterFunc(closeGrace, func() {
			_ = ps.cs.Close()
			if owned {
				p.retiring.Done()
			}
		})
		return
	}
	if p.closed || ps.dead.Load() || len(p.idle[ps.key]) >= maxIdlePerKey {
		p.mu.Unlock()
		go ps.cs.Close()
		return
	}
	ps.since = time.Now()
	p.idle[ps.key] = append(p.idle[ps.key], ps)
	p.mu.Unlock()
}

// close closes every idle session and waits for the sessions of ended
// calls to close (put); sessions in use are closed when put.
func (p *sessionPool) close() {
	p.mu.Lock()
	if !p.closed {
		close(p.stop)
	}
	p.closed = true
	idle := p.idle
	p.idle = map[string][]*parkSession{}
	p.mu.Unlock()
	for _, list := range idle {
		for _, ps := range list {
			if err := ps.cs.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
				p.log.Debug("closing idle backend session", "error", err)
			}
		}
	}
	p.retiring.Wait()
}

// parkCaps returns the client's declared elicitation, sampling and roots
// capabilities (nothing else: a backend never sees more than the client
// declared) as the capabilities of a backend session, with a key naming
// them; false when the client declared none of them, so the backend cannot
// ask and the shared connection serves the call. Roots are offered without
// listChanged: a Modern client sends no roots/list_changed to relay.
// client is the request's clientCapabilities: a map, or raw JSON
// (decodeCallTool), decoded only if it may declare one of them.
func parkCaps(client any) (*mcp.ClientCapabilities, string, bool) {
	declared, _ := client.(map[string]any)
	if raw, ok := client.(json.RawMessage); ok {
		if !mayAsk(raw) {
			return nil, "", false
		}
		declared = decodeCaps(raw)
	}
	return parkDeclared(declared)
}

// decodeCaps decodes raw clientCapabilities (a valid object: validate
// checked it).
func decodeCaps(raw json.RawMessage) map[string]any {
	var declared map[string]any
	_ = json.Unmarshal(raw, &declared)
	return declared
}

// parkDeclared is parkCaps on decoded clientCapabilities.
func parkDeclared(declared map[string]any) (*mcp.ClientCapabilities, string, bool) {
	sub := map[string]any{}
	for _, k := range []string{"elicitation", "sampling", "roots"} {
		if v, ok := declared[k]; ok && v != nil {
			sub[k] = v
		}
	}
	if len(sub) == 0 {
		return nil, "", false
	}
	if _, ok := sub["roots"]; ok {
		sub["roots"] = map[string]any{}
	}
	b, err := json.Marshal(sub) // map keys sort: one key per capability set
	if err != nil {
		return nil, "", false
	}
	caps := &mcp.ClientCapabilities{}
	if err := json.Unmarshal(b, caps); err != nil {
		return nil, "", false
	}
	if _, ok := sub["roots"]; ok {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	return caps, string(b), true
}

// mayAsk reports whether raw clientCapabilities may declare elicitation,
// sampling or roots (a key spelled with escapes is decoded to be sure).
func mayAsk(raw json.RawMessage) bool {
	return bytes.IndexByte(raw, '\\') >= 0 || bytes.Contains(raw, []byte(`"elicitation"`)) ||
		bytes.Contains(raw, []byte(`"sampling"`)) || bytes.Contains(raw, []byte(`"roots"`))
}
