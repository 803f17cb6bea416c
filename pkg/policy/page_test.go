package policy

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/pagination"
)

// pageJSON walks verb over v in pages of size and returns each page's
// JSON (AppendJSON, in brackets) and json.Marshal of its Items.
func pageJSON(t *testing.T, v *View, verb string, size int) (got, want []string) {
	t.Helper()
	codec := pagination.NewCodec([]byte("page-test-key-0123456789abcdef!!"))
	cursor := ""
	for range 100 {
		pg, err := v.Page(codec, verb, "owner", cursor, size)
		require.NoError(t, err)
		b, err := pg.AppendJSON([]byte{'['})
		require.NoError(t, err)
		m, err := json.Marshal(pg.Items())
		require.NoError(t, err)
		got, want = append(got, string(append(b, ']'))), append(want, string(m))
		if cursor = pg.Next; cursor == "" {
			return got, want
		}
	}
	t.Fatal("the walk does not end")
	return nil, nil
}

// A filtered view's page taken from the catalogue's encoding must be the
// view's own items (not the catalogue's at the same positions), encoded
// as json.Marshal encodes them; so must a whole view's and a hand-made one's.
func TestPageJSONIsTheViewsItemsAsMarshaled(t *testing.T) {
	p := testPolicy()
	cat := catalogue(t, "echo", "secret", "zed", "bx", "zz<&>")
	for name, v := range map[string]*View{
		"user (filtered)": p.View(user, cat), "admin (filtered)": p.View(admin, cat),
		"no policy": (*Policy)(nil).View(user, cat), "by hand": {Tools: cat.Tools[1:3], Resources: cat.Resources},
	} {
		for _, verb := range []string{"tools/list", "resources/list", "prompts/list", "resources/templates/list"} {
			for _, size := range []int{1, 2, 0} {
				got, want := pageJSON(t, v, verb, size)
				require.Equal(t, want, got, "%s %s by %d", name, verb, size)
			}
		}
	}
	got, _ := pageJSON(t, p.View(user, cat), "tools/list", 0)
	require.Len(t, got, 1)
	var tools []*mcp.Tool
	require.NoError(t, json.Unmarshal([]byte(got[0]), &tools))
	require.Equal(t, names(p.View(user, cat).Tools), names(tools))
	require.Len(t, tools, 3, "alpha_echo, alpha_zed and alpha_zz…: not secret nor beta's")
}

// A page of a list kind it does not know is an error, not a panic.
func TestPageOfAnUnknownVerbFails(t *testing.T) {
	_, err := (*Policy)(nil).View(user, aggregator.Empty()).Page(pagination.NewCodec([]byte("page-test-key-0123456789abcdef!!")), "tools/call", "", "", 0)
	require.Error(t, err)
}
