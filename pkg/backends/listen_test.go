package backends

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
)

// TestListenStreamGatheredAnEventOfAnySize: a listen stream's reader
// bounded each line but not an event of many data lines, which it gathered
// whole; such an event over maxListenEvent now fails the stream with an
// error naming the limit, before f sees it.
func TestListenStreamGatheredAnEventOfAnySize(t *testing.T) {
	t.Parallel()
	line := "data: " + strings.Repeat("x", 1000) + "\n"
	stream := "event: message\n" + strings.Repeat(line, maxListenEvent/len(line)+1) + "\n"
	err := scanSSE(strings.NewReader(stream), func([]byte) error {
		t.Error("an over-long event reached the listen's handler")
		return nil
	})
	require.ErrorIs(t, err, wire.ErrEventTooLarge)
	require.ErrorContains(t, err, strconv.Itoa(maxListenEvent))
}

// A listen stream's events reach f one by one; its end is unexpected.
func TestListenStreamEventsThenUnexpectedEnd(t *testing.T) {
	t.Parallel()
	var got []string
	err := scanSSE(strings.NewReader("data: a\n\n: ping\n\ndata: b\ndata: c\n\n"), func(d []byte) error {
		got = append(got, string(d))
		return nil
	})
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Equal(t, []string{"a", "b\nc"}, got)
}
