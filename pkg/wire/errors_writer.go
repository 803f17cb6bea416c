package wire

import (
	"bytes"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxErrorText bounds how much of a plain-text error JSONErrors keeps (it
// quotes MaxQuoted bytes of it).
const maxErrorText = 2 * MaxQuoted

// JSONErrors wraps w so that a plain-text error response another handler
// writes (http.Error, status >= 400: the go-sdk handler's own refusals)
// reaches the client with the same status as a JSON-RPC error body
// (application/json, id null; -32603 for a 5xx, else -32600) carrying its
// text, cut to MaxQuoted bytes. done writes that body; call it once the handler has returned. Any
// other response passes through; the wrapper flushes and unwraps
// (http.ResponseController) like w.
func JSONErrors(w http.ResponseWriter) (rw http.ResponseWriter, done func()) {
	j := &jsonErrors{ResponseWriter: w}
	return j, j.done
}

type jsonErrors struct {
	http.ResponseWriter
	mu     sync.Mutex
	wrote  bool
	status int // a plain-text error being rewritten (0: none)
	text   bytes.Buffer
}

func (j *jsonErrors) WriteHeader(code int) {
	j.mu.Lock()
	if !j.wrote && code >= 400 && IsMediaType(j.Header().Get("Content-Type"), "text/plain") {
		j.wrote, j.status = true, code
		j.mu.Unlock()
		return
	}
	j.wrote = j.wrote || code >= 200
	j.mu.Unlock()
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.holding(p) {
		return len(p), nil
	}
	return j.ResponseWriter.Write(p)
}

// holding keeps p if an error is being rewritten, and reports whether it is.
func (j *jsonErrors) holding(p []byte) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.status == 0 {
		j.wrote = true
		return false
	}
	j.text.Write(p[:min(len(p), max(0, maxErrorText-j.text.Len()))])
	return true
}

// Flush flushes the underlying writer (nothing while an error is held).
func (j *jsonErrors) Flush() {
	if !j.holding(nil) {
		_ = http.NewResponseController(j.ResponseWriter).Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

func (j *jsonErrors) done() {
	j.mu.Lock()
	status, text := j.status, strings.TrimSpace(j.text.String())
	j.status = 0
	j.mu.Unlock()
	if status == 0 {
		return
	}
	code := int64(jsonrpc.CodeInvalidRequest)
	if status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	j.Header().Del("X-Content-Type-Options")
	if c := Clip(text); len(c) < len(text) { // a name quoted in it is not echoed in full
		text = c + "…"
	}
	WriteError(j.ResponseWriter, status, nil, &jsonrpc.Error{Code: code, Message: text})
}
