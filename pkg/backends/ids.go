package backends

import "sync/atomic"

// ids numbers the requests one Manager's backends send on their own: a
// server's numbering, not the process's. Each goes on its own POST, so an
// id only has to be unique among that server's requests in flight.
type ids struct {
	direct atomic.Int64 // Direct requests
	listen atomic.Int64 // subscriptions/listen streams
}
