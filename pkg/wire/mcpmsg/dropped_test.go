package mcpmsg

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A minted token vmcp handed out before is late (after_end); any other
// token is unknown, including one that merely looks minted.
func TestUnmatchedProgressTellsLateFromUnknown(t *testing.T) {
	t.Parallel()
	var tokens ProgressTokens
	old := tokens.Mint()
	assert.Equal(t, DropAfterEnd, DropReason(tokens.Unmatched(old)))
	assert.Equal(t, DropUnknownToken, DropReason(tokens.Unmatched("nobody-sent-this")))
	assert.Equal(t, DropUnknownToken, DropReason(tokens.Unmatched(mintedPrefix+"999999999999")))
	assert.Empty(t, DropReason(errors.New("other")))
}
