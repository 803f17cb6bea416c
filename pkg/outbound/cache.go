package outbound

import (
	"sync"
	"time"
)

// cache holds tokens by key until their use-by time; at most max entries
// (a full cache first drops expired entries, then arbitrary ones).
type cache struct {
	max int

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	token string
	until time.Time // when it stops being handed out
}

func newCache(max int) *cache { return &cache{max: max, entries: map[string]entry{}} }

func (c *cache) get(key string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return "", false
	}
	if !now.Before(e.until) {
		delete(c.entries, key)
		return "", false
	}
	return e.token, true
}

func (c *cache) put(key, token string, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[key] = entry{token: token, until: until}
}

// evict makes room for one entry (under mu): expired ones go first; if none
// was, one arbitrary entry goes.
func (c *cache) evict(now time.Time) {
	n := len(c.entries)
	for k, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, k)
		}
	}
	if len(c.entries) < n {
		return
	}
	for k := range c.entries {
		delete(c.entries, k)
		return
	}
}

// drop removes key's entry if it still holds token.
func (c *cache) drop(key, token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok && e.token == token {
		delete(c.entries, key)
	}
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
