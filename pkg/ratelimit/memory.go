package ratelimit

import (
	"context"
	"sync"
	"time"
)

// sweepEvery is how often Memory drops the state of idle keys.
const sweepEvery = 10 * time.Second

// Memory is the Store of one node: a theoretical arrival time per key. A
// key's state is dropped once idle (its budget full again: the same as
// no state), so it holds only keys used within their last burst of
// intervals. Safe for concurrent use.
type Memory struct {
	now func() time.Time

	mu    sync.Mutex
	tat   map[string]time.Time
	swept time.Time
}

// NewMemory returns an empty Memory reading the time from now (nil:
// time.Now; tests inject a clock).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tat: map[string]time.Time{}}
}

// Take is the GCRA on key (Store); it never fails.
func (m *Memory) Take(_ context.Context, key string, interval time.Duration, burst int) (time.Duration, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.swept) >= sweepEvery {
		m.sweep(now)
	}
	tat, ok := m.tat[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	if allowAt := next.Add(-interval * time.Duration(burst)); now.Before(allowAt) {
		return allowAt.Sub(now), nil
	}
	m.tat[key] = next
	return 0, nil
}

// Len is the number of keys with state held.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}

// sweep drops the keys whose budget is full again (under mu).
func (m *Memory) sweep(now time.Time) {
	m.swept = now
	for k, tat := range m.tat {
		if !tat.After(now) {
			delete(m.tat, k)
		}
	}
}
