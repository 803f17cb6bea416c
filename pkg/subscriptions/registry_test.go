package subscriptions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeUpstream records upstream calls and fails on a desync: a subscribe
// of a key already subscribed, or an unsubscribe of one that is not.
type fakeUpstream struct {
	mu      sync.Mutex
	on      map[Resource]bool
	calls   []string
	fail    map[string]bool // URIs whose subscribe fails
	desyncs int
	jitter  bool
}

func newFake() *fakeUpstream { return &fakeUpstream{on: map[Resource]bool{}, fail: map[string]bool{}} }

func (f *fakeUpstream) SubscribeResource(_ context.Context, backend, uri string) error {
	f.pause()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[uri] {
		return errors.New("refused")
	}
	k := Resource{URI: uri, Backend: backend}
	if f.on[k] {
		f.desyncs++
	}
	f.on[k] = true
	f.calls = append(f.calls, "sub "+backend+" "+uri)
	return nil
}

func (f *fakeUpstream) UnsubscribeResource(_ context.Context, backend, uri string) error {
	f.pause()
	f.mu.Lock()
	defer f.mu.Unlock()
	k := Resource{URI: uri, Backend: backend}
	if !f.on[k] {
		f.desyncs++
	}
	delete(f.on, k)
	f.calls = append(f.calls, "unsub "+backend+" "+uri)
	return nil
}

func (f *fakeUpstream) pause() {
	if f.jitter {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
}

// recordingSink records what it is sent; after fail is set it errors.
type recordingSink struct {
	mu   sync.Mutex
	sent []string
	fail bool
	got  chan struct{}
}

func newSink() *recordingSink { return &recordingSink{got: make(chan struct{}, 64)} }

func (s *recordingSink) Send(method string, params mcp.Params) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("stream closed")
	}
	b, _ := json.Marshal(params)
	s.sent = append(s.sent, method+" "+string(b))
	s.got <- struct{}{}
	return nil
}

func (s *recordingSink) messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sent...)
}

func res(uris ...string) []Resource {
	var out []Resource
	for _, u := range uris {
		out = append(out, Resource{URI: u, Backend: "b"})
	}
	return out
}

func TestOpenSubscribesOncePerURIAndReleaseUnsubscribesLast(t *testing.T) {
	up := newFake()
	up.fail["x://refused"] = true
	r := NewRegistry(up, nil, nil)
	a := r.Open(t.Context(), json.RawMessage(`1`), mcp.NotificationSubscriptions{ToolsListChanged: true}, res("x://a", "x://refused"))
	b := r.Open(t.Context(), json.RawMessage(`1`), mcp.NotificationSubscriptions{}, res("x://a", "x://b"))
	assert.Equal(t, mcp.NotificationSubscriptions{ToolsListChanged: true, ResourceSubscriptions: []string{"x://a"}}, a.Honored,
		"a URI the backend refused is not honored")
	assert.Equal(t, []string{"x://a", "x://b"}, b.Honored.ResourceSubscriptions)
	assert.Equal(t, 2, r.refCount("b", "x://a"))
	assert.Equal(t, []string{"sub b x://a", "sub b x://b"}, up.calls)

	r.Release(a)
	r.Release(a) // idempotent
	assert.Equal(t, 1, r.refCount("b", "x://a"))
	assert.Equal(t, []string{"sub b x://a", "sub b x://b"}, up.calls, "another stream still holds x://a")
	r.Release(b)
	assert.ElementsMatch(t, []string{"sub b x://a", "sub b x://b", "unsub b x://a", "unsub b x://b"}, up.calls)
	assert.Zero(t, r.refCount("b", "x://a"))
	assert.Zero(t, r.Len())
	assert.Empty(t, r.refs, "idle entries are forgotten")
}

func TestServeDeliversOnlyWhatWasGrantedWithSubscriptionID(t *testing.T) {
	r := NewRegistry(newFake(), nil, nil)
	a := r.Open(t.Context(), json.RawMessage(`"A"`), mcp.NotificationSubscriptions{ToolsListChanged: true}, res("x://a"))
	b := r.Open(t.Context(), json.RawMessage(`"B"`), mcp.NotificationSubscriptions{PromptsListChanged: true}, res("x://b"))
	sa, sb := newSink(), newSink()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for _, x := range []struct {
		s    *Stream
		sink *recordingSink
	}{{a, sa}, {b, sb}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			graceful, err := x.s.Serve(ctx, x.sink)
			assert.False(t, graceful)
			assert.NoError(t, err)
		}()
	}
	r.ListChanged(true, false, true)    // tools for A; resources granted to nobody
	r.ResourceUpdated("b", "x://b")     // B only
	r.ResourceUpdated("other", "x://a") // served by another backend: not A's subscription
	r.ResourceUpdated("b", "x://a")     // A only
	<-sa.got
	<-sa.got
	<-sb.got
	cancel()
	wg.Wait()
	assert.Equal(t, []string{
		`notifications/tools/list_changed {"_meta":{"io.modelcontextprotocol/subscriptionId":"A"}}`,
		`notifications/resources/updated {"_meta":{"io.modelcontextprotocol/subscriptionId":"A"},"uri":"x://a"}`,
	}, sa.messages())
	assert.Equal(t, []string{
		`notifications/resources/updated {"_meta":{"io.modelcontextprotocol/subscriptionId":"B"},"uri":"x://b"}`,
	}, sb.messages())
}

func TestPendingNotificationsCoalesceAndOverflowDrops(t *testing.T) {
	uris := make([]string, MaxPendingUpdates+5)
	for i := range uris {
		uris[i] = fmt.Sprintf("x://%d", i)
	}
	r := NewRegistry(newFake(), nil, nil)
	s := r.Open(t.Context(), json.RawMessage(`1`), mcp.NotificationSubscriptions{ToolsListChanged: true}, res(uris...))
	for range 3 {
		r.ListChanged(true, true, true)
		r.ResourceUpdated("b", "x://0")
	}
	for _, u := range uris {
		r.ResourceUpdated("b", u)
	}
	notes := s.take()
	require.Len(t, notes, 1+MaxPendingUpdates, "one tools/list_changed, then the bounded updates")
	assert.Equal(t, MethodToolsListChanged, notes[0].method)
	assert.Equal(t, "x://0", notes[1].params.(*mcp.ResourceUpdatedNotificationParams).URI, "repeats coalesce")
	assert.Empty(t, s.take())
}

func TestCloseEndsStreamsGracefully(t *testing.T) {
	r := NewRegistry(nil, nil, nil)
	s := r.Open(t.Context(), json.RawMessage(`7`), mcp.NotificationSubscriptions{ToolsListChanged: true}, res("x://a"))
	assert.Empty(t, s.Honored.ResourceSubscriptions, "no upstream: no resource subscription")
	done := make(chan bool)
	go func() {
		graceful, _ := s.Serve(t.Context(), newSink())
		done <- graceful
	}()
	r.Close()
	r.Close()
	assert.True(t, <-done)
	late := r.Open(t.Context(), json.RawMessage(`8`), mcp.NotificationSubscriptions{}, nil)
	<-late.done
	r.Release(s)
	r.Release(late)
	assert.Zero(t, r.Len())
}

func TestServeEndsOnWriteFailure(t *testing.T) {
	r := NewRegistry(nil, nil, nil)
	s := r.Open(t.Context(), json.RawMessage(`1`), mcp.NotificationSubscriptions{ToolsListChanged: true}, nil)
	sink := newSink()
	sink.fail = true
	r.ListChanged(true, false, false)
	graceful, err := s.Serve(t.Context(), sink)
	assert.False(t, graceful)
	assert.Error(t, err)
}

// Streams opening and releasing the same URIs concurrently never desync the
// upstream: every subscribe finds it unsubscribed and vice versa, and
// nothing is left subscribed at the end.
func TestConcurrentOpenReleaseStaysInSync(t *testing.T) {
	up := newFake()
	up.jitter = true
	r := NewRegistry(up, nil, nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 40 {
				s := r.Open(context.Background(), json.RawMessage(`1`), mcp.NotificationSubscriptions{},
					res(fmt.Sprintf("x://%d", (i+j)%3), "x://shared"))
				r.ResourceUpdated("b", "x://shared")
				r.Release(s)
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, up.desyncs)
	assert.Empty(t, up.on)
	assert.Zero(t, r.Len())
	assert.Empty(t, r.refs)
}
