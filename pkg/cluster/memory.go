package cluster

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/vmcp/vmcp/pkg/shrink"
)

// record is a value with an expiry time.
type record struct {
	val     string
	expires time.Time
}

func (r record) live(now time.Time) bool { return now.Before(r.expires) }

// memStore is a tiny in-process TTL key-value map shared by the memory
// implementations (one node: nothing is shared with anyone else).
type memStore struct {
	mu   sync.Mutex
	now  func() time.Time
	m    map[string]record
	peak shrink.Peak // of m
}

func newMemStore() *memStore { return &memStore{now: time.Now, m: map[string]record{}} }

// get returns the live value of key. Requires s.mu.
func (s *memStore) get(key string) (string, bool) {
	r, ok := s.m[key]
	if !ok {
		return "", false
	}
	if !r.live(s.now()) {
		shrink.Delete(&s.m, &s.peak, key)
		return "", false
	}
	return r.val, true
}

// set stores key for ttl. Requires s.mu.
func (s *memStore) set(key, val string, ttl time.Duration) {
	s.m[key] = record{val: val, expires: s.now().Add(ttl)}
}

// memDirectory is the single-node Directory.
type memDirectory struct{ s *memStore }

// newMemoryDirectory returns an in-process Directory (single node).
func newMemoryDirectory() Directory { return &memDirectory{s: newMemStore()} }

func (d *memDirectory) Announce(_ context.Context, n NodeInfo, ttl time.Duration) (bool, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	_, live := d.s.get("node:" + n.ID)
	d.s.set("node:"+n.ID, n.URL, ttl)
	return !live, nil
}

func (d *memDirectory) Withdraw(_ context.Context, id string) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	delete(d.s.m, "node:"+id)
	return nil
}

func (d *memDirectory) Node(_ context.Context, id string) (NodeInfo, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	u, ok := d.s.get("node:" + id)
	if !ok {
		return NodeInfo{}, ErrNotFound
	}
	return NodeInfo{ID: id, URL: u}, nil
}

func (d *memDirectory) Nodes(_ context.Context) ([]NodeInfo, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	var out []NodeInfo
	for k := range d.s.m {
		if id, ok := strings.CutPrefix(k, "node:"); ok {
			if u, live := d.s.get(k); live {
				out = append(out, NodeInfo{ID: id, URL: u})
			}
		}
	}
	return out, nil
}

func (d *memDirectory) Claim(_ context.Context, session, node, principal string, ttl time.Duration) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	v := ownerValue(node, principal)
	if cur, ok := d.s.get("sess:" + session); ok && cur != v {
		return ErrConflict
	}
	d.s.set("sess:"+session, v, ttl)
	return nil
}

func (d *memDirectory) Refresh(_ context.Context, node string, sessions map[string]string, ttl time.Duration) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	for id, p := range sessions {
		d.s.set("sess:"+id, ownerValue(node, p), ttl)
	}
	return nil
}

func (d *memDirectory) Lookup(_ context.Context, session string) (NodeInfo, string, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	v, ok := d.s.get("sess:" + session)
	if !ok {
		return NodeInfo{}, "", ErrNotFound
	}
	id, p := splitOwner(v)
	u, ok := d.s.get("node:" + id)
	if !ok {
		return NodeInfo{}, "", ErrNotFound
	}
	return NodeInfo{ID: id, URL: u}, p, nil
}

func (d *memDirectory) Release(_ context.Context, session, node string) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	if cur, ok := d.s.get("sess:" + session); ok {
		if id, _ := splitOwner(cur); id == node {
			shrink.Delete(&d.s.m, &d.s.peak, "sess:"+session)
		}
	}
	return nil
}

// ownerValue is a session record's value: the owner node's ID, then a NUL
// byte and the principal key when the session has a principal (node IDs
// never contain NUL; the principal key may).
func ownerValue(node, principal string) string {
	if principal == "" {
		return node
	}
	return node + "\x00" + principal
}

// splitOwner is the inverse of ownerValue.
func splitOwner(v string) (node, principal string) {
	node, principal, _ = strings.Cut(v, "\x00")
	return node, principal
}
