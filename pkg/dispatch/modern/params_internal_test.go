package modern

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// goSDKCallParams is the params of a tools/call from a default go-sdk
// 2026-07-28 client.
const goSDKCallParams = `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"text":"hi"},"name":"b_echo"}`

var callParamsSeeds = []string{
	goSDKCallParams,
	`{}`, `null`, `[]`, `"x"`, `5`,
	`{"name":"a","name":"b"}`,
	`{"Name":"a"}`, `{"NAME":"a","arguments":1}`, `{"n\u0061me":"a"}`, `{"naſme":"a"}`,
	`{"name":5}`, `{"name":null,"requestState":null}`, `{"name":"caf\u00e9"}`, `{"name":"café"}`,
	`{"requestState":7}`, `{"requestState":"s1","inputResponses":{"a":{"action":"accept"}}}`,
	`{"inputResponses":[]}`, `{"inputResponses":null}`,
	`{"arguments":null}`, `{"arguments":[1,2]}`, `{"arguments":"s"}`,
	`{"_meta":null}`, `{"_meta":[]}`, `{"_meta":"x"}`, `{"_meta":{}}`,
	`{"_meta":{"a":1,"a":"two"}}`, `{"_meta":{"_meta":1},"_meta":{"b":2}}`, `{"_META":{"a":1}}`,
	`{"_meta":{"progressToken":1e400}}`, `{"_meta":{"progressToken":-1.50e2,"t":true,"f":false,"n":null}}`,
	`{"_meta":{"k\"q":1}}`, `{"_meta":{"ké":1}}`, `{"_meta":{"s":"a\nb","u":"é"}}`,
	`{"_meta":{"o":{"x":[1,{"y":"}"}]},"l":[{}]}}`,
	` { "name" : "a" , "other" : {"name":1} } `,
}

// metaValues decodes the raw object and array values decodeCallTool keeps,
// so its Meta compares with json.Unmarshal's.
func metaValues(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		if raw, ok := v.(json.RawMessage); ok {
			var d any
			_ = json.Unmarshal(raw, &d)
			v = d
		}
		out[k] = v
	}
	return out
}

func checkDecodeCallTool(t *testing.T, in string) {
	var want mcp.CallToolParamsRaw
	wantErr := json.Unmarshal([]byte(in), &want)
	got, err := decodeCallTool(json.RawMessage(in))
	if wantErr != nil {
		require.Error(t, err, "input %s", in)
		assert.Equal(t, wantErr.Error(), err.Error(), "input %s", in)
		return
	}
	require.NoError(t, err, "input %s", in)
	p := got.(*callParams)
	assert.Equal(t, want.Name, p.Name, "input %s", in)
	assert.Equal(t, string(want.Arguments), string(p.Arguments), "input %s", in)
	assert.Equal(t, want.RequestState, p.RequestState, "input %s", in)
	assert.Equal(t, want.InputResponses, p.InputResponses, "input %s", in)
	assert.Equal(t, want.Meta, metaValues(p.Meta), "input %s", in)
	if want.Meta == nil {
		assert.Nil(t, p.rawMeta, "input %s", in)
		return
	}
	var fromRaw mcp.Meta
	require.NoError(t, json.Unmarshal(p.rawMeta, &fromRaw), "rawMeta of %s", in)
	assert.Equal(t, want.Meta, fromRaw, "rawMeta of %s", in)
}

func TestDecodeCallToolLikeUnmarshal(t *testing.T) {
	for _, in := range callParamsSeeds {
		checkDecodeCallTool(t, in)
	}
}

func FuzzDecodeCallToolMatchesUnmarshal(f *testing.F) {
	for _, in := range callParamsSeeds {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			t.Skip() // params always come from a valid request body
		}
		checkDecodeCallTool(t, in)
	})
}

// TestModernCallParamsDecodedByReflection pins the hot path's decode: the
// go-sdk client's tools/call params took 28 allocations (and 4 µs)
// through json.Unmarshal, its _meta decoded into nested maps; the scan
// takes 11 (1 µs). Interning the common _meta keys and the revision value
// made it 6, at no measurable cost per call (make bench's tuning row,
// 2026-12-04), and was removed.
func TestModernCallParamsDecodedByReflection(t *testing.T) {
	raw := json.RawMessage(goSDKCallParams)
	n := testing.AllocsPerRun(100, func() {
		if _, err := decodeCallTool(raw); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, n, 12.0)
}

// TestModernCallMetaReencodedForBackend pins what the direct path hands
// the call core: the client's own _meta values byte for byte (a decoded map
// would turn 1.50 into 1.5 and reorder keys) without its per-hop keys
// (the core adds vmcp's), the minted progress token in place of the
// client's, and the backend's name and requestState.
func TestModernCallMetaReencodedForBackend(t *testing.T) {
	in := `{"_meta":{"z":1.50,"io.modelcontextprotocol/clientInfo":{"name":"c"},"a":{"k" : [1, 2]},"progressToken":"client's",` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}},` +
		`"name":"b_echo","requestState":"client's"}`
	p, err := decodeCallTool(json.RawMessage(in))
	require.NoError(t, err)
	rq := &request{clientCaps: p.GetMeta()[mcp.MetaKeyClientCapabilities]}
	rq.stream = &callStream{rq: rq, minLevel: 2, minted: "vmcp-progress-1"}
	cp := p.(*callParams)
	cp.RequestState = "inner"
	meta, params, err := directParams(rq, upstream.Target{Name: "echo"}, cp)
	require.NoError(t, err)
	assert.Equal(t, `{"z":1.50,"a":{"k" : [1, 2]},"progressToken":"vmcp-progress-1"}`, string(meta))
	assert.Equal(t, `{"name":"echo","arguments":{},"requestState":"inner"}`, string(params))
}
