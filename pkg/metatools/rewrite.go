package metatools

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/vmcp/vmcp/pkg/wire"
)

// Rewrite turns a POST body holding a tools/call of call_tool into the
// tools/call of the tool it names, its arguments and every other member
// (id, _meta with its progress token, requestState, inputResponses) kept:
// the request then takes the direct call's path on either revision
// (routing, authorization, progress, logs, asks, cancellation, metrics).
// Any other body, and a call_tool whose arguments name no tool, are left
// as they are (the latter reaches Call, which refuses it).
func Rewrite(r *http.Request) {
	bb, ok := r.Body.(*wire.BufferedBody)
	if !ok {
		return
	}
	if out, name, ok := rewrite(bb.Bytes()); ok {
		r.Body = wire.NewBufferedBody(out)
		r.ContentLength = int64(len(out))
		if r.Header.Get(nameHeader) == CallName { // Modern: Mcp-Name mirrors params.name
			r.Header.Set(nameHeader, headerValue(name))
		}
	}
}

// nameHeader is the Modern revision's header mirroring params.name.
const nameHeader = "Mcp-Name"

// headerValue is name as an MCP header value: itself when it is printable
// ASCII, else its =?base64?…?= form (SEP-2243).
func headerValue(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] > 0x7e {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?="
		}
	}
	return name
}

// rewrite is Rewrite on a body's bytes; name is the inner tool's.
func rewrite(body []byte) (out []byte, name string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || string(m["method"]) != `"tools/call"` {
		return nil, "", false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil || json.Unmarshal(params["name"], &name) != nil || name != CallName {
		return nil, "", false
	}
	var inner struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params["arguments"], &inner) != nil || inner.Name == nil || *inner.Name == CallName ||
		len(inner.Arguments) > 0 && inner.Arguments[0] != '{' && string(inner.Arguments) != "null" {
		return nil, "", false
	}
	params["name"], _ = json.Marshal(*inner.Name)
	delete(params, "arguments")
	if len(inner.Arguments) > 0 && string(inner.Arguments) != "null" {
		params["arguments"] = inner.Arguments
	}
	var err error
	if m["params"], err = json.Marshal(params); err != nil {
		return nil, "", false
	}
	out, err = json.Marshal(m)
	return out, *inner.Name, err == nil
}
