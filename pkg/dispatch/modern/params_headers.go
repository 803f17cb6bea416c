package modern

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// checkParamHeaders enforces the Mcp-Param-* rules of 2026-07-28 Streamable
// HTTP for a tools/call of tool, as the SDK server does: an annotated
// argument that is present and not null needs its header with an equal
// value (=?base64?…?= decoded, integers compared numerically); an absent or
// null one must have no header. Violations are -32020.
func checkParamHeaders(rq *request, tool *mcp.Tool, args json.RawMessage) *jsonrpc.Error {
	if !mcpmsg.HeaderParams(tool) {
		return nil // the common case, without collecting bindings
	}
	bindings := wire.ParamBindings(mcpmsg.SchemaMap(tool.InputSchema))
	if len(bindings) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if len(args) > 0 && json.Unmarshal(args, &obj) != nil {
		return nil // not an object: the backend rejects the arguments
	}
	for _, b := range bindings {
		if msg := checkBinding(rq.r.Header.Get(headerParam+b.Header), obj, b); msg != "" {
			return mismatch(msg)
		}
	}
	return nil
}

// checkBinding returns the mismatch message for one binding, "" if fine.
func checkBinding(h string, args map[string]json.RawMessage, b wire.ParamBinding) string {
	name := headerParam + b.Header
	arg, found := wire.LookupArg(args, b.Path)
	where := strings.Join(b.Path, ".")
	if !found || string(arg) == "null" {
		if h != "" {
			return fmt.Sprintf("header mismatch: unexpected %s header for absent or null parameter %q", name, where)
		}
		return ""
	}
	if h == "" {
		return fmt.Sprintf("header mismatch: missing %s header for parameter %q", name, where)
	}
	v, ok := decodeHeaderValue(h)
	if !ok {
		return fmt.Sprintf("header mismatch: %s header contains invalid Base64 encoding", name)
	}
	if !primitiveEqual(v, arg) {
		return fmt.Sprintf("header mismatch: %s header value %s does not match parameter %q", name, wire.Quote(h), where)
	}
	return ""
}

// primitiveEqual compares a decoded header value with a JSON argument that
// must be a string, a boolean or a safe integer (SEP-2243).
func primitiveEqual(h string, arg json.RawMessage) bool {
	var v any
	if json.Unmarshal(arg, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case float64:
		const safe = 1<<53 - 1
		if v != math.Trunc(v) || math.Abs(v) > safe {
			return false
		}
		n, err := strconv.ParseFloat(h, 64)
		return err == nil && n == v
	}
	return false
}
