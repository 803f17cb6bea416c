package capabilities

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

func TestComputeMergesKindsAndRespectsDeliverable(t *testing.T) {
	a := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}
	b := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{Subscribe: true}, Completions: &mcp.CompletionCapabilities{}}

	none := Compute([]*mcp.ServerCapabilities{a, nil, b}, Deliverable{})
	assert.NotNil(t, none.Tools)
	assert.False(t, none.Tools.ListChanged, "listChanged must not be advertised when vmcp does not deliver it")
	assert.False(t, none.Resources.Subscribe)
	assert.Nil(t, none.Logging)
	assert.Nil(t, none.Prompts)
	assert.NotNil(t, none.Completions)

	all := Compute([]*mcp.ServerCapabilities{a, b}, Deliverable{ListChanged: true, ResourceUpdates: true, Logging: true})
	assert.True(t, all.Tools.ListChanged)
	assert.True(t, all.Resources.ListChanged)
	assert.True(t, all.Resources.Subscribe)
	assert.NotNil(t, all.Logging)

	assert.NotNil(t, Compute(nil, Deliverable{}), "capabilities is never nil")
}

func TestHonoredIsTheIntersection(t *testing.T) {
	want := &mcp.NotificationSubscriptions{ToolsListChanged: true, PromptsListChanged: true, ResourceSubscriptions: []string{"a://x", "b://y"}}
	caps := Compute([]*mcp.ServerCapabilities{{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{Subscribe: true}}},
		Deliverable{ListChanged: true, ResourceUpdates: true})
	got := Honored(caps, want, func(uri string) bool { return uri == "a://x" })
	assert.True(t, got.ToolsListChanged)
	assert.False(t, got.PromptsListChanged, "no backend offers prompts")
	assert.False(t, got.ResourcesListChanged, "not requested")
	assert.Equal(t, []string{"a://x"}, got.ResourceSubscriptions)

	silent := Honored(Compute([]*mcp.ServerCapabilities{{Tools: &mcp.ToolCapabilities{}}}, Deliverable{}), want, nil)
	assert.Equal(t, mcp.NotificationSubscriptions{}, silent, "nothing deliverable means an empty honored set")
}
