package mcpmsg

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A backend error without a code ("error": {}) or without a message reached
// the client as code 0 with the message `backend "b": `.
func TestBackendErrorWithoutCodeGotCode0(t *testing.T) {
	for _, c := range []struct {
		in       *jsonrpc.Error
		code     int64
		contains string
	}{
		{&jsonrpc.Error{}, jsonrpc.CodeInternalError, `backend "b": answered with an error without a code`},
		{&jsonrpc.Error{Message: "boom"}, jsonrpc.CodeInternalError, `without a code: "boom"`},
		{&jsonrpc.Error{Code: -32000}, -32000, `backend "b": answered with error -32000 without a message`},
		{&jsonrpc.Error{Code: -32000, Message: "boom"}, -32000, `backend "b": boom`},
	} {
		var we *jsonrpc.Error
		require.ErrorAs(t, WireError("b", c.in), &we)
		assert.Equal(t, c.code, we.Code, "%+v", c.in)
		assert.Contains(t, we.Message, c.contains)
	}
}
