package upstream

import "github.com/vmcp/vmcp/pkg/backends"

// sharedSession is the session of a request routed ViaShared: b's control
// connection (a stdio or SSE backend), shared by the Modern clients'
// requests of no principal. Such a request's progress reaches it by its
// token and its logs while it is alone in flight (backends.ControlConn);
// the backend cannot ask it anything.
func sharedSession(b *backends.Backend) (session, error) {
	conn, err := b.ControlConn()
	if err != nil {
		return nil, err
	}
	return connSession{conn}, nil
}
