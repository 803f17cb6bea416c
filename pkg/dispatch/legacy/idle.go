package legacy

import (
	"sync"
	"time"
)

// idleTimer ends a client session after a period with no POST in flight,
// as the go-sdk handler's SessionTimeout does for the requests it serves;
// vmcp keeps it because relayed requests never reach that handler.
// A nil *idleTimer (no idle timeout) does nothing.
type idleTimer struct {
	mu      sync.Mutex
	timeout time.Duration
	refs    int         // POSTs in flight
	t       *time.Timer // nil once stopped
}

// newIdleTimer starts the timer; expire runs once after timeout idle.
func newIdleTimer(timeout time.Duration, expire func()) *idleTimer {
	if timeout <= 0 {
		return nil
	}
	return &idleTimer{timeout: timeout, t: time.AfterFunc(timeout, expire)}
}

// start marks a POST in flight, pausing the timer.
func (i *idleTimer) start() {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.t != nil && i.refs == 0 {
		i.t.Stop()
	}
	i.refs++
}

// end marks a POST done; with none left in flight the timer restarts.
func (i *idleTimer) end() {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.refs--
	if i.t != nil && i.refs == 0 {
		i.t.Reset(i.timeout)
	}
}

// stop stops the timer for good (the session ended).
func (i *idleTimer) stop() {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.t != nil {
		i.t.Stop()
		i.t = nil
	}
}
