package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBackendDescriptionWasRefused: a backend's description (what tool
// search indexes for its tools, in the operator's words) is a known key.
func TestBackendDescriptionWasRefused(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("backends:\n  - name: kube\n    url: http://127.0.0.1:1/mcp\n    description: Kubernetes clusters.\n"), "t.yaml")
	require.NoError(t, err)
	assert.Equal(t, "Kubernetes clusters.", cfg.Backends[0].Description)
}
