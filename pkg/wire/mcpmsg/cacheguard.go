package mcpmsg

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// GuardResult returns result with a non-zero ttlMs moved into _meta, and
// whether it changed.
func GuardResult(result json.RawMessage) (json.RawMessage, bool) {
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

// GuardMessage applies GuardResult to the result of one JSON-RPC message.
func GuardMessage(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, ttlMarker) {
		return msg, false
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(msg, &env) != nil || env["result"] == nil {
		return msg, false
	}
	res, changed := GuardResult(env["result"])
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
