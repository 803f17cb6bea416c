package edge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
)

// ReadBody reads a request's body whole before next runs, so that no
// handler waits on a slow client: the body must arrive within timeout (a
// read deadline on the connection from the moment the headers are read,
// cleared once the body is in; 408 and the connection closed beyond it,
// and on any failure to read it the deadline is left expired)
// and hold at most limit bytes (413). next gets the body in memory as a
// wire.BufferedBody with ContentLength set. Requests without a body are not
// touched, so GET streams get no deadline at all. timeout or limit <= 0
// disables that bound.
func ReadBody(next http.Handler, timeout time.Duration, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if limit > 0 && r.ContentLength > limit {
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", limit))
			return
		}
		rc := http.NewResponseController(w)
		deadline := timeout > 0 && rc.SetReadDeadline(time.Now().Add(timeout)) == nil
		body, err := readAll(r.Body, r.ContentLength, limit)
		if err == nil && deadline {
			// The response may stream for long. (net/http's HTTP/1 server
			// also clears it when its background read starts at the body's
			// end; this does not rely on that.)
			_ = rc.SetReadDeadline(time.Time{})
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			refuse(w, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %s (http.read_body_timeout)", timeout))
			return
		case errors.Is(err, errTooLarge):
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", limit))
			return
		case err != nil:
			refuse(w, http.StatusBadRequest, "failed to read request body: "+err.Error())
			return
		}
		r.Body = wire.NewBufferedBody(body)
		r.ContentLength = int64(len(body))
		r.TransferEncoding = nil
		r.GetBody = func() (io.ReadCloser, error) { return wire.NewBufferedBody(body), nil }
		next.ServeHTTP(w, r)
	})
}

var errTooLarge = errors.New("request body too large")

// readAll reads rd to its end, at most limit bytes (limit <= 0: no bound);
// size is the announced length (-1 when unknown), used only to size the
// buffer.
func readAll(rd io.Reader, size, limit int64) ([]byte, error) {
	if size < 0 || size > 1<<20 {
		size = 512
	}
	if limit > 0 {
		rd = io.LimitReader(rd, limit+1)
	}
	// As io.ReadAll, into a buffer of the announced size plus the one byte
	// that lets a read see the end: bytes.Buffer.ReadFrom wants 512 bytes
	// free before each read, so it grew (copied) every body it had sized.
	buf := make([]byte, 0, size+1)
	for {
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if limit > 0 && int64(len(buf)) > limit {
		return nil, errTooLarge
	}
	return buf, nil
}

// refuse answers a request whose body may not have been read whole, and
// closes the connection: what is left of the body is never read (net/http
// would otherwise try to drain up to 256 KiB of it after the handler,
// waiting on a stalled client).
func refuse(w http.ResponseWriter, status int, msg string) {
	dontRead(w)
	wire.WriteError(w, status, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg})
}

// dontRead closes the connection after this response, and expires its read
// deadline, so nothing waits on the rest of the request's body.
func dontRead(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}
