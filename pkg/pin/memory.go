package pin

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is a Store of one node's own pins. Safe for concurrent use.
type Memory struct {
	mu   sync.Mutex
	pins map[string]map[string]*memPin // by backend, then tool
	// retained is when Retain last ran for each backend.
	retained map[string]time.Time
}

// memPin is one pin and when its tool was last offered (Retain).
type memPin struct {
	hash string
	seen time.Time // zero: not yet seen by Retain
}

// NewMemory returns an empty memory Store.
func NewMemory() *Memory {
	return &Memory{pins: map[string]map[string]*memPin{}, retained: map[string]time.Time{}}
}

// Pin implements Store.
func (m *Memory) Pin(_ context.Context, backend, tool, hash string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.pins[backend][tool]; ok {
		return p.hash, nil
	}
	m.set(backend, tool, hash)
	return hash, nil
}

// Set implements Store.
func (m *Memory) Set(_ context.Context, backend, tool, hash string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set(backend, tool, hash)
	return nil
}

// set writes a pin (under mu), keeping when its tool was last seen.
func (m *Memory) set(backend, tool, hash string) {
	b := m.pins[backend]
	if b == nil {
		b = map[string]*memPin{}
		m.pins[backend] = b
	}
	if p := b[tool]; p != nil {
		p.hash = hash
		return
	}
	b[tool] = &memPin{hash: hash}
}

// Watch implements Store: one node has no other nodes to hear from.
func (m *Memory) Watch(func(backend, tool, hash string)) func() { return func() {} }

// Retain implements Retainer. It also deletes every pin of a backend
// Retain has not run for within keep (removed by a reload).
func (m *Memory) Retain(_ context.Context, backend string, live []string, now time.Time, keep time.Duration, maxDropped int) (Retained, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out Retained
	m.retained[backend] = now
	for b, at := range m.retained {
		if !at.After(now.Add(-keep)) {
			if out.Removed == nil {
				out.Removed = map[string]int{}
			}
			out.Removed[b] = len(m.pins[b])
			delete(m.pins, b)
			delete(m.retained, b)
		}
	}
	pins, offered := m.pins[backend], make(map[string]bool, len(live))
	for _, t := range live {
		offered[t] = true
	}
	type dropped struct {
		tool string
		seen time.Time
	}
	var drops []dropped
	for t, p := range pins {
		if offered[t] || p.seen.IsZero() {
			p.seen = now // offered, or a pin Retain has not seen yet: retained from now
		}
		switch {
		case offered[t]:
		case !p.seen.After(now.Add(-keep)):
			delete(pins, t)
			out.Expired++
		default:
			drops = append(drops, dropped{t, p.seen})
		}
	}
	if over := len(drops) - maxDropped; over > 0 {
		slices.SortFunc(drops, func(a, b dropped) int { return cmp.Or(a.seen.Compare(b.seen), cmp.Compare(a.tool, b.tool)) })
		for _, d := range drops[:over] {
			delete(pins, d.tool)
		}
		out.Evicted = over
	}
	return out, nil
}
