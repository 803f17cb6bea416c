package pin

import "context"

// drop deletes the pins of backend's tools (owners.go: a principal's pins
// beyond the bound).
func (m *Memory) drop(_ context.Context, backend string, tools []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range tools {
		delete(m.pins[backend], t)
	}
	if len(m.pins[backend]) == 0 {
		delete(m.pins, backend)
	}
	return nil
}

// drop deletes the pins of backend's tools: one HDEL on its hash.
func (r *Redis) drop(ctx context.Context, backend string, tools []string) error {
	return r.rdb.HDel(ctx, r.key(backend), tools...).Err()
}
