package modern

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpliceResultType(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                 `{"resultType":"complete"}`,
		`{ }`:                `{"resultType":"complete" }`,
		`{"content":[]}`:     `{"resultType":"complete","content":[]}`,
		`{ "isError":true }`: `{"resultType":"complete", "isError":true }`,
	} {
		assert.Equal(t, want, string(spliceResultType([]byte(in))), in)
	}
}

func TestMarshalMRTR(t *testing.T) {
	legacy := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	b, err := marshalMRTR(legacy, false)
	require.NoError(t, err)
	assert.JSONEq(t, `{"resultType":"complete","content":[{"type":"text","text":"x"}]}`, string(b))

	var modern mcp.CallToolResult // as decoded from a Modern backend
	require.NoError(t, modern.UnmarshalJSON([]byte(`{"content":[],"resultType":"complete"}`)))
	b, err = marshalMRTR(&modern, modern.NeedsInput())
	require.NoError(t, err)
	assert.JSONEq(t, `{"resultType":"complete","content":[]}`, string(b), "no duplicate member")

	var input mcp.CallToolResult
	require.NoError(t, input.UnmarshalJSON([]byte(`{"resultType":"input_required","requestState":"s"}`)))
	require.True(t, input.NeedsInput())
	b, err = marshalMRTR(&input, true)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resultType":"input_required"`)
	assert.NotContains(t, string(b), `"complete"`)
}

func TestDecodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"=?base64?aMOp?=":    "hé",
		"=?base64?no suffix": "=?base64?no suffix",
		"=?base64??=":        "",
		"x=?base64?aGk=?=":   "x=?base64?aGk=?=",
	} {
		got, ok := decodeHeaderValue(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	_, ok := decodeHeaderValue("=?base64?***?=")
	assert.False(t, ok)
}

func TestStatusFor(t *testing.T) {
	for code, want := range map[int64]int{
		jsonrpc.CodeMethodNotFound:                http.StatusNotFound,
		jsonrpc.CodeInvalidParams:                 http.StatusBadRequest,
		mcp.CodeHeaderMismatch:                    http.StatusBadRequest,
		mcp.CodeMissingRequiredClientCapabilities: http.StatusBadRequest,
		mcp.CodeUnsupportedProtocolVersion:        http.StatusBadRequest,
		jsonrpc.CodeInternalError:                 http.StatusOK,
		-32000:                                    http.StatusOK,
	} {
		assert.Equal(t, want, statusFor(code), code)
	}
}
