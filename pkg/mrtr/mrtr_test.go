package mrtr

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/identity"
)

// noIdle is Next's idle bound in tests that do not test it: one no
// loaded machine reaches before the backend goroutine gets to ask (1 s
// could be, and the call then ended as idle).
const noIdle = time.Minute

func TestStateSealOpen(t *testing.T) {
	c := NewCodec(bytes.Repeat([]byte("k"), 32))
	st := State{Method: "tools/call", Name: "a_t", Backend: "a", Target: "t", Inner: "backend-state"}
	tok := c.Seal(st)
	got, err := c.Open(tok)
	require.NoError(t, err)
	assert.Equal(t, st, got)
	assert.True(t, got.Belongs("tools/call", "a_t"))
	assert.False(t, got.Belongs("prompts/get", "a_t"))

	for name, bad := range map[string]string{
		"tampered":   tok[:len(tok)-2] + "AA",
		"suffixed":   tok + "-TAMPERED",
		"no tag":     strings.Split(tok, ".")[0],
		"empty":      "",
		"other key":  NewCodec(bytes.Repeat([]byte("x"), 32)).Seal(st),
		"not base64": "!!.!!",
	} {
		_, err := c.Open(bad)
		assert.ErrorIs(t, err, ErrInvalidState, name)
	}
	assert.Panics(t, func() { NewCodec([]byte("short")) })
}

// A requestState vmcp issued to one principal must not resume or pin
// another principal's retry.
func TestStateOfAnotherPrincipalRefused(t *testing.T) {
	c := NewCodec(bytes.Repeat([]byte("k"), 32))
	alice := identity.Principal{Issuer: "https://idp", Subject: "alice"}
	bob := identity.Principal{Issuer: "https://idp", Subject: "bob"}
	tok := c.Seal(State{Method: "tools/call", Name: "a_t", Backend: "a", Parked: true, Call: "c1", Round: 1}.For(alice))
	got, err := c.OpenFor(tok, alice)
	require.NoError(t, err)
	assert.Equal(t, alice.Tag(), got.Owner)
	for name, p := range map[string]identity.Principal{"other principal": bob, "anonymous": {}} {
		_, err = c.OpenFor(tok, p)
		require.ErrorIs(t, err, ErrInvalidState, name)
		assert.Contains(t, err.Error(), "issued to another principal")
	}
	anon := c.Seal(State{Method: "tools/call", Name: "a_t"}.For(identity.Principal{}))
	_, err = c.OpenFor(anon, identity.Principal{})
	require.NoError(t, err, "no inbound auth: every state is anonymous")
	_, err = c.OpenFor(anon, alice)
	require.ErrorIs(t, err, ErrInvalidState)
}

// askAsync runs one backend request on its own goroutine and returns its answer.
func askAsync(c *Call, p mcp.InputRequest) chan answer {
	out := make(chan answer, 1)
	go func() {
		r, err := c.Ask(context.Background(), p)
		out <- answer{r, err}
	}()
	return out
}

func TestCallRoundsThenResult(t *testing.T) {
	dir := NewMemory()
	c := NewCall(context.Background(), NewID(), "legacy")
	require.NoError(t, dir.Add(c))
	proceed := make(chan mcp.InputResponse)
	cleaned := make(chan bool, 1)
	c.Start(func(ctx context.Context) (any, error) {
		r := <-proceed
		return r, nil
	}, func(abandoned bool) { dir.Remove(c.ID); cleaned <- abandoned })

	a1 := askAsync(c, &mcp.ElicitParams{Message: "name?"})
	out, err := c.Next(t.Context(), noIdle)
	require.NoError(t, err)
	require.Len(t, out.Asks, 1)
	id := ""
	for k := range out.Asks {
		id = k
	}
	assert.True(t, strings.HasPrefix(id, "elicit-"))
	round := c.Park(time.Minute)

	assert.ErrorIs(t, c.Resume(round, mcp.InputResponseMap{id: &mcp.ListRootsResult{}}, nil), ErrMismatch)
	assert.ErrorIs(t, c.Resume(round+1, nil, nil), ErrStaleRound)
	require.NoError(t, c.Resume(round, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept"}}, nil))
	assert.ErrorIs(t, c.Resume(round, nil, nil), ErrStaleRound, "a state is used once")
	got := <-a1
	require.NoError(t, got.err)
	assert.Equal(t, "accept", got.resp.(*mcp.ElicitResult).Action)

	go func() { proceed <- got.resp }()
	out, err = c.Next(t.Context(), noIdle)
	require.NoError(t, err)
	assert.Nil(t, out.Asks)
	assert.Equal(t, got.resp, out.Result)
	assert.False(t, <-cleaned)
	assert.Zero(t, dir.Len())
}

func TestParkTimeoutCancelsTheCall(t *testing.T) {
	c := NewCall(context.Background(), NewID(), "legacy")
	cleaned := make(chan bool, 1)
	c.Start(func(ctx context.Context) (any, error) {
		_, err := c.Ask(ctx, &mcp.ListRootsParams{})
		<-ctx.Done()
		return nil, errors.Join(err, context.Cause(ctx))
	}, func(abandoned bool) { cleaned <- abandoned })
	out, err := c.Next(t.Context(), noIdle)
	require.NoError(t, err)
	require.Len(t, out.Asks, 1)
	round := c.Park(20 * time.Millisecond)
	assert.True(t, <-cleaned, "the call is abandoned")
	assert.ErrorIs(t, c.err, ErrParkTimeout)
	assert.ErrorIs(t, c.Resume(round, nil, nil), ErrNotParked)
}

func TestClientGoneCancelsTheCall(t *testing.T) {
	c := NewCall(context.Background(), NewID(), "legacy")
	cleaned := make(chan bool, 1)
	c.Start(func(ctx context.Context) (any, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}, func(abandoned bool) { cleaned <- abandoned })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Next(ctx, noIdle)
	assert.ErrorIs(t, err, ErrClientGone)
	assert.True(t, <-cleaned)
	assert.ErrorIs(t, c.err, ErrClientGone)

	idle := NewCall(context.Background(), NewID(), "legacy")
	idle.Start(func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() }, func(bool) { cleaned <- true })
	_, err = idle.Next(t.Context(), 10*time.Millisecond)
	assert.ErrorIs(t, err, ErrBackendIdle)
	<-cleaned
}

// TestResumeAnsweredBeforeTheRetryClaimedTheCall pins the order of a
// resume: the retry's claim (its stream takes the call's progress) runs
// before the backend gets its answers, so what the backend sends on
// receiving them has a stream to go to (TestModernParkedCallProgressLost
// lost progress 2 and 3 this way); a refused retry claims nothing.
func TestResumeAnsweredBeforeTheRetryClaimedTheCall(t *testing.T) {
	c := NewCall(context.Background(), NewID(), "legacy")
	var claims atomic.Int32
	seen := make(chan int32, 1)
	c.Start(func(ctx context.Context) (any, error) {
		r, err := c.Ask(ctx, &mcp.ElicitParams{Message: "name?"})
		seen <- claims.Load()
		return r, err
	}, func(bool) {})
	out, err := c.Next(t.Context(), noIdle)
	require.NoError(t, err)
	require.Len(t, out.Asks, 1)
	var id string
	for k := range out.Asks {
		id = k
	}
	round := c.Park(time.Minute)
	claim := func() error { claims.Add(1); return nil }
	assert.ErrorIs(t, c.Resume(round+1, nil, claim), ErrStaleRound)
	assert.ErrorIs(t, c.Resume(round, mcp.InputResponseMap{id: &mcp.ListRootsResult{}}, claim), ErrMismatch)
	require.NoError(t, c.Resume(round, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept"}}, claim))
	assert.Equal(t, int32(1), <-seen, "the backend had its answer before the retry claimed the call, or a refused retry claimed it")
	out, err = c.Next(t.Context(), noIdle)
	require.NoError(t, err)
	assert.Nil(t, out.Asks)
}

// TestResumeAnsweredAfterItsClaimFailed pins a retry that cannot go on
// once it claimed the call (its backend was removed): the backend never
// gets the answers (it could act on them) and the call ends with the
// claim's error.
func TestResumeAnsweredAfterItsClaimFailed(t *testing.T) {
	c := NewCall(context.Background(), NewID(), "legacy")
	got := make(chan error, 1)
	cleaned := make(chan bool, 1)
	c.Start(func(ctx context.Context) (any, error) {
		_, err := c.Ask(ctx, &mcp.ElicitParams{Message: "delete?"})
		got <- err
		return nil, err
	}, func(abandoned bool) { cleaned <- abandoned })
	out, err := c.Next(t.Context(), noIdle)
	require.NoError(t, err)
	var id string
	for k := range out.Asks {
		id = k
	}
	round := c.Park(time.Minute)
	gone := errors.New("backend gone")
	err = c.Resume(round, mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept"}}, func() error { return gone })
	assert.ErrorIs(t, err, gone)
	assert.Error(t, <-got, "the backend got the answer of a retry that failed")
	assert.True(t, <-cleaned, "the call is abandoned")
	assert.ErrorIs(t, c.Resume(round, nil, nil), ErrNotParked)
}
