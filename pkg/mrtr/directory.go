package mrtr

import "sync"

// Directory records the calls parked on this node, by ID, between rounds.
// A parked call is a live backend request on this node, so it can only be
// resumed here: the owner node is sealed into its requestState, and a node
// receiving a retry for another node hands it over (modern.Options.
// ResumeOn). A cluster implementation may also publish ownership; Memory is
// the single-node one. Implementations are safe for concurrent use.
type Directory interface {
	// Add records c under c.ID.
	Add(c *Call) error
	// Lookup returns the call recorded under id.
	Lookup(id string) (*Call, bool)
	// Remove forgets id; it is idempotent.
	Remove(id string)
	// Range calls f for each recorded call until f returns false.
	Range(f func(*Call) bool)
	// Len is the number of recorded calls.
	Len() int
}

// Memory is the in-process Directory.
type Memory struct {
	mu    sync.Mutex
	calls map[string]*Call
}

// NewMemory returns an empty in-process Directory.
func NewMemory() *Memory { return &Memory{calls: map[string]*Call{}} }

// Add records c under c.ID.
func (m *Memory) Add(c *Call) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[c.ID] = c
	return nil
}

// Lookup returns the call recorded under id.
func (m *Memory) Lookup(id string) (*Call, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.calls[id]
	return c, ok
}

// Remove forgets id.
func (m *Memory) Remove(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.calls, id)
}

// Range calls f for a snapshot of the recorded calls until f returns false.
func (m *Memory) Range(f func(*Call) bool) {
	m.mu.Lock()
	all := make([]*Call, 0, len(m.calls))
	for _, c := range m.calls {
		all = append(all, c)
	}
	m.mu.Unlock()
	for _, c := range all {
		if !f(c) {
			return
		}
	}
}

// Len is the number of recorded calls.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}
