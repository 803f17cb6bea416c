package cluster

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func (c *Cluster) watchedNodes() int {
	c.watches.mu.Lock()
	defer c.watches.mu.Unlock()
	return len(c.watches.m)
}

// TestForwardToAFrozenOwnerEndsOnceItIsDeclaredDead pins a forward that
// waited on a frozen owner for as long as its client did: once the owner's
// node record is gone the forward ends with ErrNotFound (the session is
// lost: the client gets 404 and initializes again), and its watch ends.
func TestForwardToAFrozenOwnerEndsOnceItIsDeclaredDead(t *testing.T) {
	p := newPair(t)
	res := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(p.front.URL + "/hang?to=" + url.QueryEscape(p.own.URL))
		if err == nil {
			resp.Body.Close()
		}
		res <- resp
	}()
	require.Eventually(t, func() bool { return p.a.watchedNodes() == 1 }, eventWait, 10*time.Millisecond, "the forward is in flight")
	require.NoError(t, p.b.Close()) // its record goes; its server stays frozen
	select {
	case resp := <-res:
		require.NotNil(t, resp)
		require.Equal(t, 599, resp.StatusCode)
		require.Equal(t, ErrNotFound.Error(), resp.Header.Get("X-Forward-Error"))
	case <-time.After(eventWait):
		t.Fatal("the forward still waits on the dead owner")
	}
	require.Eventually(t, func() bool { return p.a.watchedNodes() == 0 }, eventWait, 10*time.Millisecond, "the watch ended with its forward")
}

// TestNodeWatchEndsWithItsLastForward: forwards that complete leave no
// watcher behind.
func TestNodeWatchEndsWithItsLastForward(t *testing.T) {
	p := newPair(t)
	for range 3 {
		resp, err := http.Get(p.front.URL + "/x?to=" + url.QueryEscape(p.own.URL))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.Eventually(t, func() bool { return p.a.watchedNodes() == 0 }, eventWait, 10*time.Millisecond, "a watch outlived its forwards")
}
