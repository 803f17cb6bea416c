package wire

import (
	"bytes"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventWriterSendAfterFinalWasWritten pins the failure of
// TestRelayForwardedForeignAndLateProgress (Legacy client, relayed call)
// under load: Final on a started stream sent the last event, released the
// lock and only then closed the stream, so a Send racing it (late progress
// from the tap) could write an event after the response and succeed, and
// the progress was neither delivered nor counted as after_end. A Send that
// succeeds must now come before the final event; else it fails with
// ErrStreamClosed.
func TestEventWriterSendAfterFinalWasWritten(t *testing.T) {
	final := []byte(`{"final":true}`)
	for range 5000 {
		w := httptest.NewRecorder()
		e := NewEventWriter(w)
		require.NoError(t, e.Send([]byte(`{"first":true}`)))
		var wg sync.WaitGroup
		var sendErr error
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; _ = e.Final(200, final) }()
		go func() { defer wg.Done(); <-start; sendErr = e.Send([]byte(`{"late":true}`)) }()
		close(start)
		wg.Wait()
		body := w.Body.Bytes()
		late := bytes.Index(body, []byte(`"late"`))
		if sendErr == nil {
			require.Less(t, late, bytes.Index(body, final), "a Send that succeeded wrote after the final event")
		} else {
			require.ErrorIs(t, sendErr, ErrStreamClosed)
			require.Equal(t, -1, late)
		}
	}
}
