package pin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A per-principal backend (auth.type: token_exchange) offers each
// principal its own tools, so one principal's definition of a tool is no
// change of another's: pins shared by name made bob's legitimately
// different definition a "change" of alice's (withheld under deny), or
// hid a change made for alice alone behind bob's listing re-pinning it.
// Its tools are pinned per principal: the key carries the principal's
// tag (identity.Principal.Tag, a digest: no identity reaches the store),
// and the store holds them under the backend as "TAG\x00TOOL". A backend
// keeps the pins of at most MaxOwners principals: the least recently
// listed one's are dropped (here and, where the store can, there) when
// another principal's first listing would exceed it.

// DefaultMaxOwners is Options.MaxOwners's default.
const DefaultMaxOwners = 1000

// ownerSep separates a principal's tag from the tool name in the store.
const ownerSep = "\x00"

// AdmitFor is Admit of the tools backend offers owner, a principal's key
// (identity.Principal.Key; "": a shared backend, as Admit): pinned, and
// decided, apart from every other principal's.
func (p *Pins) AdmitFor(backend, owner string, tools []*mcp.Tool) []*mcp.Tool {
	if owner == "" {
		return p.Admit(backend, tools)
	}
	tag := ownerTag(owner)
	p.touch(backend, tag)
	return p.admitAll(backend, tag, tools)
}

// ownerTag is owner's tag: the first 8 bytes of the SHA-256 of its key,
// in hex, as identity.Principal.Tag.
func ownerTag(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:8])
}

// stored is k's tool name in the store.
func (k key) stored() string {
	if k.owner == "" {
		return k.tool
	}
	return k.owner + ownerSep + k.tool
}

// storedKey is the key of a pin the store names by backend and tool.
func storedKey(backend, tool string) key {
	if owner, name, ok := strings.Cut(tool, ownerSep); ok {
		return key{backend, owner, name}
	}
	return key{backend: backend, tool: tool}
}

// takeArmed reports whether the config accepts k's change to the
// definition h (p.mu held; an armed hash accepts only that definition):
// a shared tool's accept is taken once; a per-principal tool's is taken
// once per principal (until a load that names the entry anew).
func (p *Pins) takeArmed(k key, h string) bool {
	ak := key{backend: k.backend, tool: k.tool}
	want, ok := p.armed[ak]
	if !ok || (want != "" && want != h) {
		return false
	}
	if k.owner == "" {
		delete(p.armed, ak)
		return true
	}
	if p.armedUsed[k] {
		return false
	}
	p.armedUsed[k] = true
	return true
}

// pending reports whether any principal's (or the shared) definition of
// backend's tool differs from its pin (p.mu held).
func (p *Pins) pending(backend, tool string) bool {
	for k, e := range p.state {
		if k.backend == backend && k.tool == tool && e.offered != e.pinned {
			return true
		}
	}
	return false
}

// owners are the principals with pins of one backend, by the sequence
// number of their last listing.
type owners struct {
	seq  uint64
	last map[string]uint64
}

// touch records a listing of backend for tag, first dropping the least
// recently listed principal's pins when tag is new and the backend has
// MaxOwners already.
func (p *Pins) touch(backend, tag string) {
	p.obs.Lock()
	defer p.obs.Unlock()
	p.mu.Lock()
	o := p.seen[backend]
	if o == nil {
		o = &owners{last: map[string]uint64{}}
		p.seen[backend] = o
	}
	o.seq++
	_, known := o.last[tag]
	o.last[tag] = o.seq
	var gone []key
	if !known && len(o.last) > p.maxOwners() {
		gone = p.evict(backend, o, tag)
	}
	p.mu.Unlock()
	if len(gone) > 0 {
		p.drop(backend, gone)
	}
}

func (p *Pins) maxOwners() int {
	if p.opts.MaxOwners > 0 {
		return p.opts.MaxOwners
	}
	return DefaultMaxOwners
}

// evict forgets the least recently listed principal of backend other
// than keep (p.mu held) and returns the keys of its pins.
func (p *Pins) evict(backend string, o *owners, keep string) []key {
	oldest, at := "", uint64(0)
	for t, s := range o.last {
		if t != keep && (oldest == "" || s < at) {
			oldest, at = t, s
		}
	}
	delete(o.last, oldest)
	var gone []key
	for k := range p.state {
		if k.backend == backend && k.owner == oldest {
			gone = append(gone, k)
			delete(p.state, k)
		}
	}
	for k := range p.armedUsed {
		if k.backend == backend && k.owner == oldest {
			delete(p.armedUsed, k)
		}
	}
	return gone
}

// dropper is a Store that can delete pins (Memory, Redis: drop.go).
type dropper interface {
	drop(ctx context.Context, backend string, tools []string) error
}

// drop deletes the pins of keys of backend from the store, if it can.
func (p *Pins) drop(backend string, keys []key) {
	d, ok := p.opts.Store.(dropper)
	if !ok {
		return
	}
	tools := make([]string, len(keys))
	for i, k := range keys {
		tools[i] = k.stored()
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := d.drop(ctx, backend, tools); err != nil {
		p.count(backend, OutcomeStoreError)
		p.warn("tool pin store failed; a principal's pins beyond the bound stay there", keys[0], "error", err)
	}
}
