package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// The cache guard protects connections shared by many clients (the control
// connection) from the go-sdk client's TTL cache, which ignores cacheScope
// and would serve one caller's result to the next: every result read off
// such a connection with a non-zero ttlMs is rewritten to ttlMs 0 before
// the SDK sees it, the original kept in _meta[UpstreamTTLKey] so vmcp can
// still aggregate and pass on the backend's hint. cacheScope is untouched.

// UpstreamTTLKey is the result _meta key holding a backend's original
// ttlMs after the cache guard zeroed it; strip it before results leave vmcp.
const UpstreamTTLKey = "vmcp.dev/upstreamTtlMs"

var ttlMarker = []byte(`"ttlMs"`)

// guardResult returns result with a non-zero ttlMs moved into _meta, and
// whether it changed.
func guardResult(result json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(result, ttlMarker) {
		return result, false
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(result, &res) != nil {
		return result, false
	}
	var ttl int64
	if raw, ok := res["ttlMs"]; !ok || json.Unmarshal(raw, &ttl) != nil || ttl == 0 {
		return result, false
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := res["_meta"]; ok && json.Unmarshal(raw, &meta) != nil || meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[UpstreamTTLKey] = json.RawMessage(strconv.FormatInt(ttl, 10))
	mb, err := json.Marshal(meta)
	if err != nil {
		return result, false
	}
	res["_meta"], res["ttlMs"] = mb, json.RawMessage("0")
	out, err := json.Marshal(res)
	if err != nil {
		return result, false
	}
	return out, true
}

// guardMessage applies guardResult to the result of one JSON-RPC message.
func guardMessage(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, ttlMarker) {
		return msg, false
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil || env["result"] == nil {
		return msg, false
	}
	res, changed := guardResult(env["result"])
	if !changed {
		return msg, false
	}
	env["result"] = res
	out, err := json.Marshal(env)
	if err != nil {
		return msg, false
	}
	return out, true
}

// guardHTTP wraps an HTTP client so JSON and SSE response bodies pass
// through guardMessage.
func guardHTTP(base *http.Client) *http.Client {
	return &http.Client{Transport: &guardTransport{base: base.Transport}}
}

type guardTransport struct{ base http.RoundTripper }

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	return rewriteBody(resp, guardMessage)
}

// rewriteBody makes resp's JSON body, or each event of its SSE body, pass
// through rewrite (which returns a message and whether it changed it).
func rewriteBody(resp *http.Response, rewrite func([]byte) ([]byte, bool)) (*http.Response, error) {
	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case wire.MediaJSON:
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		if len(b) > maxResponse { // too long to rewrite: passed on whole
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
			return resp, nil
		}
		resp.Body.Close()
		if out, changed := rewrite(b); changed {
			b = out
			resp.ContentLength = int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
	case wire.MediaSSE:
		resp.Body = &guardBody{src: wire.NewEventReader(resp.Body), body: resp.Body, rewrite: rewrite}
	}
	return resp, nil
}

// guardBody passes an SSE stream through one event at a time (read with
// wire.EventReader, so an event over wire.MaxEvent fails the stream),
// rewriting the data of events that rewrite changes.
type guardBody struct {
	src     *wire.EventReader
	body    io.Closer
	rewrite func([]byte) ([]byte, bool)
	pending []byte
	out     []byte
	err     error
}

func (b *guardBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.pending = b.readEvent()
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// readEvent reads one SSE event and returns it as it is to be passed on:
// its fields, and its data rewritten if needed (comments are dropped); an
// event cut short by the stream's end fails it instead.
func (b *guardBody) readEvent() []byte {
	ev, err := b.src.Event()
	if err == nil && b.src.Cut() { // not passed on whole: the reader may resume
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.err = err
		return nil
	}
	if out, changed := b.rewrite(ev.Data); changed {
		ev.Data = out
	}
	b.out = wire.AppendEvent(b.out[:0], ev)
	return b.out
}

func (b *guardBody) Close() error { return b.body.Close() }

// guardTransportConn wraps a non-HTTP transport so responses read off its
// connection pass through guardResult.
type guardTransportConn struct{ mcp.Transport }

func (t *guardTransportConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardConn{Connection: c}, nil
}

type guardConn struct{ mcp.Connection }

func (c *guardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil && r.Result != nil {
		r.Result, _ = guardResult(r.Result)
	}
	return msg, err
}

// CacheHint is a caching hint for one kind of result as vmcp aggregates
// them across backends (2026-07-28 caching): the smallest non-zero ttlMs,
// and private when any contributor said private. The zero value means "no
// hint" and is the identity of Merge.
type CacheHint struct {
	TTLMs   int
	Private bool
}

// HintOf reads the hint of one result: its cacheScope, and its ttlMs or,
// when the cache guard zeroed it, the original from meta.
func HintOf(c mcp.Cacheable, meta mcp.Meta) CacheHint {
	h := CacheHint{TTLMs: c.TTLMs, Private: c.CacheScope == "private"}
	switch v := meta[UpstreamTTLKey].(type) {
	case float64:
		h.TTLMs = int(v)
	case int:
		h.TTLMs = v
	case json.Number:
		if n, err := v.Int64(); err == nil {
			h.TTLMs = int(n)
		}
	}
	return h
}

// Merge combines two hints: the smallest non-zero ttlMs, private if either.
func (h CacheHint) Merge(o CacheHint) CacheHint {
	if h.TTLMs <= 0 || (o.TTLMs > 0 && o.TTLMs < h.TTLMs) {
		h.TTLMs = max(o.TTLMs, 0)
	}
	h.Private = h.Private || o.Private
	return h
}

// Cacheable is the hint as the ttlMs and cacheScope fields of a result.
func (h CacheHint) Cacheable() mcp.Cacheable {
	c := mcp.Cacheable{TTLMs: h.TTLMs, CacheScope: "public"}
	if h.Private {
		c.CacheScope = "private"
	}
	return c
}

// ListCache returns the hint b's last complete list walk saw for method
// (tools/list, prompts/list, resources/list, resources/templates/list);
// false while b is not ready or never listed it.
func (b *Backend) ListCache(method string) (CacheHint, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.hints[method]
	return h, ok && b.state == StateReady
}

// setHints records the cache hints of a list walk (on failure, the methods
// walked so far).
func (b *Backend) setHints(h map[string]CacheHint) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hints = h
}
