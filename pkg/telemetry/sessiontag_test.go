package telemetry

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSessionTagIsShortAndStable(t *testing.T) {
	t.Parallel()
	id := "6Q2QK3ZJ4WZQW3B5TJ2TB7K4XG"
	assert.Equal(t, "", SessionTag(""))
	assert.Len(t, SessionTag(id), 8)
	assert.Equal(t, SessionTag(id), SessionTag(id))
	assert.NotEqual(t, SessionTag(id), SessionTag(id+"x"))
	assert.NotContains(t, id, SessionTag(id))
}
