package aggregator

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A page assembled from the encoded list must read as json.Marshal of the
// page's items: HTML-escaped as Marshal escapes, maps with sorted keys.
func TestEncodedListIsJSONMarshalOfEachItem(t *testing.T) {
	tools := []*mcp.Tool{
		{Name: "a", Description: "<b>&amp;</b>", InputSchema: map[string]any{"type": "object", "z": 1, "a": []any{"x"}}},
		{Name: "b", InputSchema: map[string]any{"type": "object"}},
		{Name: "c", Title: "ü \u2028", InputSchema: map[string]any{"type": "object"}},
	}
	l := encodeList(tools)
	require.Equal(t, 3, l.Len())
	for i := range 4 {
		for j := i; j <= 3; j++ {
			want, err := json.Marshal(tools[i:j])
			require.NoError(t, err)
			got, err := l.AppendRange([]byte{'['}, i, j)
			require.NoError(t, err)
			require.Equal(t, string(want), string(append(got, ']')), "items [%d, %d)", i, j)
			require.Equal(t, len(want)-2, l.SizeHint(i, j))
		}
	}
	b, err := l.Item(1)
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"b","inputSchema":{"type":"object"}}`, string(b))
}

// An item json.Marshal refuses fails the pages that hold it, as
// marshaling the page did, and no other.
func TestEncodedListItemThatDoesNotMarshalFailsOnlyItsPages(t *testing.T) {
	tools := []*mcp.Tool{{Name: "a", InputSchema: map[string]any{}}, {Name: "b", InputSchema: map[string]any{"x": math.Inf(1)}}, {Name: "c", InputSchema: map[string]any{}}}
	l := encodeList(tools)
	_, err := l.AppendRange(nil, 0, 3)
	require.Error(t, err)
	_, err = l.Item(1)
	require.Error(t, err)
	got, err := l.AppendRange(nil, 2, 3)
	require.NoError(t, err)
	require.Equal(t, `{"inputSchema":{},"name":"c"}`, string(got))
	got, err = l.AppendRange(nil, 0, 1)
	require.NoError(t, err)
	require.Equal(t, `{"inputSchema":{},"name":"a"}`, string(got))
}

// The catalogue encodes each list once and keeps it: a second caller gets
// the same encoding, another catalogue its own.
func TestCatalogueJSONIsBuiltOncePerCatalogue(t *testing.T) {
	a := &Catalogue{Tools: []*mcp.Tool{{Name: "x", InputSchema: map[string]any{}}}}
	b := &Catalogue{Tools: []*mcp.Tool{{Name: "y", InputSchema: map[string]any{}}}}
	require.Same(t, a.JSON(KindTools), a.JSON(KindTools))
	ga, _ := a.JSON(KindTools).Item(0)
	gb, _ := b.JSON(KindTools).Item(0)
	require.Contains(t, string(ga), `"x"`)
	require.Contains(t, string(gb), `"y"`)
	require.Equal(t, 0, a.JSON(KindPrompts).Len())
}
