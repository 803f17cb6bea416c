package backends

import (
	"sync/atomic"

	"github.com/vmcp/vmcp/pkg/bulkgc"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// ids is what one Manager's backends share of their server: the numbering
// of the requests they send on their own (each goes on its own POST, so an
// id only has to be unique among that server's requests in flight), and
// the server's bulk phases, and its sender.
type ids struct {
	tokens mcpmsg.ProgressTokens // the progress tokens the server mints
	direct atomic.Int64          // Direct requests
	bulk   *bulkgc.Limiter       // list walks are bulk phases of it (nil: none)
	send   senderRef             // the one sender (Manager.SetSender)
}

// Tokens returns the server's progress tokens (one per Manager).
func (m *Manager) Tokens() *mcpmsg.ProgressTokens { return &m.opts.ids.tokens }
