package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Modern subscriptions/listen through vmcp, with Modern (stateless) and
// Legacy (stateful) backends: list changes and resource updates are
// delivered with the listen's subscription id, each stream gets only what
// it asked for, upstream subscriptions are shared and released, and a
// dropped backend listen is reopened.

var eras = []harness.Mode{harness.Stateless, harness.Stateful}

// subBackend is an in-process backend whose server can subscribe to
// resources; it counts the backend-side subscribe and unsubscribe calls per
// URI.
type subBackend struct {
	cfg    config.Backend
	srv    *mcp.Server
	subs   sync.Map // uri -> *atomic.Int32
	unsubs sync.Map
}

func (b *subBackend) count(m *sync.Map, uri string) int {
	v, _ := m.LoadOrStore(uri, new(atomic.Int32))
	return int(v.(*atomic.Int32).Load())
}

// startSubBackend starts it in mode with opts (may be nil), features added
// by setup, and its HTTP handler wrapped by wrap (may be nil).
func startSubBackend(t *testing.T, name string, mode harness.Mode, opts *mcp.ServerOptions, setup func(*mcp.Server), wrap func(http.Handler) http.Handler) *subBackend {
	t.Helper()
	b := &subBackend{}
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	bump := func(m *sync.Map, uri string) {
		v, _ := m.LoadOrStore(uri, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
	}
	opts.SubscribeHandler = func(_ context.Context, r *mcp.SubscribeRequest) error { bump(&b.subs, r.Params.URI); return nil }
	opts.UnsubscribeHandler = func(_ context.Context, r *mcp.UnsubscribeRequest) error { bump(&b.unsubs, r.Params.URI); return nil }
	b.srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, opts)
	if setup != nil {
		setup(b.srv)
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.srv },
		&mcp.StreamableHTTPOptions{Stateless: mode == harness.Stateless})
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	b.cfg = config.Backend{Name: name, URL: hs.URL, Transport: config.TransportStreamableHTTP}
	return b
}

// addDocs adds resources doc://a and doc://b, each reading its own URI.
func addDocs(s *mcp.Server) {
	for _, uri := range []string{"doc://a", "doc://b"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: r.Params.URI}}}, nil
		})
	}
}

// modernPost sends one Modern request (id raw JSON) to vmcp with the
// headers of 2026-07-28 and the required _meta; the response is returned
// unread.
func modernPost(t *testing.T, ctx context.Context, v *harness.VMCP, id, method, name string, params map[string]any) *http.Response {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeyProtocolVersion] = modernRevision
	if _, ok := meta[mcp.MetaKeyClientCapabilities]; !ok {
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{}
	}
	params["_meta"] = meta
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", modernRevision)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// modernRPC sends one Modern request and decodes its JSON reply.
func modernRPC(t *testing.T, v *harness.VMCP, id, method, name string, params map[string]any) (int, map[string]any) {
	t.Helper()
	resp := modernPost(t, ctx(t), v, id, method, name, params)
	defer resp.Body.Close()
	var msg map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	return resp.StatusCode, msg
}

// listenStream is a raw subscriptions/listen on vmcp; its messages arrive
// on msgs, which is closed when the stream ends.
type listenStream struct {
	ack    map[string]any // the acknowledged notifications
	msgs   chan map[string]any
	cancel context.CancelFunc
}

// openListenStream opens a listen with JSON-RPC id and the requested
// notifications, and returns once the acknowledgement (checked to carry
// the subscription id) has arrived.
func openListenStream(t *testing.T, v *harness.VMCP, id string, notifications map[string]any) *listenStream {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	resp := modernPost(t, c, v, id, "subscriptions/listen", "", map[string]any{"notifications": notifications})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ls := &listenStream{msgs: make(chan map[string]any, 64), cancel: cancel}
	go func() {
		defer close(ls.msgs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					ls.msgs <- m
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range ls.msgs {
		}
	})
	ack := ls.next(t)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	params := ack["params"].(map[string]any)
	requireSubscriptionID(t, params, id)
	ls.ack = params["notifications"].(map[string]any)
	return ls
}

func (ls *listenStream) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-ls.msgs:
		require.True(t, ok, "listen stream ended")
		return m
	case <-time.After(stateWait):
		t.Fatal("no message on the listen stream")
		return nil
	}
}

// quiet requires that nothing arrives on the stream for d.
func (ls *listenStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-ls.msgs:
		if ok {
			t.Fatalf("unexpected message on the listen stream: %v", m)
		}
	case <-time.After(d):
	}
}

func requireSubscriptionID(t *testing.T, params map[string]any, id string) {
	t.Helper()
	var want any
	require.NoError(t, json.Unmarshal([]byte(id), &want))
	meta, _ := params["_meta"].(map[string]any)
	require.Equal(t, want, meta[mcp.MetaKeySubscriptionID], "subscriptionId in %v", params)
}

// Two listen streams subscribed to different URIs each get only their own
// resources/updated; vmcp subscribes each URI once upstream however many
// streams hold it, and releases it when the last one closes.
func TestModernListenResourceSubscriptionsAreIsolated(t *testing.T) {
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			be := startSubBackend(t, "be", mode, nil, func(s *mcp.Server) { addDocs(s) }, nil)
			v := harness.StartVMCP(t, nil, be.cfg)
			a := openListenStream(t, v, `"A"`, map[string]any{"resourceSubscriptions": []string{"doc://a"}})
			b := openListenStream(t, v, `7`, map[string]any{"resourceSubscriptions": []string{"doc://b", "doc://missing"}})
			a2 := openListenStream(t, v, `"A2"`, map[string]any{"resourceSubscriptions": []string{"doc://a"}})
			require.Equal(t, map[string]any{"resourceSubscriptions": []any{"doc://a"}}, a.ack)
			require.Equal(t, map[string]any{"resourceSubscriptions": []any{"doc://b"}}, b.ack, "a URI nobody serves is not honored")
			require.Equal(t, 1, be.count(&be.subs, "doc://a"), "one upstream subscription for two streams")
			if mode == harness.Stateful { // else the go-sdk drops an update sent before vmcp's GET stream is connected
				harness.AwaitGETStreams(t, be.srv, stateWait)
			}
			require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://a"}))
			for _, s := range []struct {
				ls *listenStream
				id string
			}{{a, `"A"`}, {a2, `"A2"`}} {
				m := s.ls.next(t)
				require.Equal(t, "notifications/resources/updated", m["method"])
				p := m["params"].(map[string]any)
				require.Equal(t, "doc://a", p["uri"])
				requireSubscriptionID(t, p, s.id)
			}
			require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://b"}))
			m := b.next(t)
			require.Equal(t, "doc://b", m["params"].(map[string]any)["uri"])
			requireSubscriptionID(t, m["params"].(map[string]any), `7`)
			// Sentinel: a later doc://a update is next on a and a2 (no doc://b before it).
			require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://a"}))
			for _, ls := range []*listenStream{a, a2} {
				require.Equal(t, "doc://a", ls.next(t)["params"].(map[string]any)["uri"], "only its own URI's updates")
			}

			listens := v.Server.ModernListens()
			a.cancel() // closing a stream is cancellation
			require.Eventually(t, func() bool { return v.Server.ModernListens() == listens-1 }, stateWait, 5*time.Millisecond,
				"vmcp released the closed listen stream")
			require.Zero(t, be.count(&be.unsubs, "doc://a"), "a2 still holds doc://a")
			a2.cancel()
			b.cancel()
			require.Eventually(t, func() bool {
				return be.count(&be.unsubs, "doc://a") == 1 && be.count(&be.unsubs, "doc://b") == 1
			}, stateWait, 10*time.Millisecond, "the last holder releases the upstream subscription")
		})
	}
}

// A go-sdk Modern client's Subscribe (its own listen per URI) gets
// resources/updated for its URI only, and Unsubscribe releases vmcp's
// upstream subscription.
func TestModernListenGoSDKClientSubscribe(t *testing.T) {
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			be := startSubBackend(t, "be", mode, nil, func(s *mcp.Server) { addDocs(s) }, nil)
			v := harness.StartVMCP(t, nil, be.cfg)
			got := make(chan string, 64)
			cs := v.Connect(t, "", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { got <- r.Params.URI }})
			require.True(t, cs.InitializeResult().Capabilities.Resources.Subscribe)
			require.NoError(t, cs.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "doc://a"}))
			tick := time.NewTicker(50 * time.Millisecond) // the client's listen opens in the background
			defer tick.Stop()
			var first string
			for first == "" {
				select {
				case first = <-got:
				case <-tick.C:
					for _, uri := range []string{"doc://b", "doc://a"} {
						require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: uri}))
					}
				case <-time.After(stateWait):
					t.Fatal("no resources/updated reached the client")
				}
			}
			require.Equal(t, "doc://a", first)
			require.NoError(t, cs.Unsubscribe(ctx(t), &mcp.UnsubscribeParams{URI: "doc://a"}))
			require.Eventually(t, func() bool { return be.count(&be.unsubs, "doc://a") == 1 }, stateWait, 10*time.Millisecond)
			for drained := false; !drained; {
				select {
				case uri := <-got:
					require.Equal(t, "doc://a", uri, "only the subscribed URI")
				default:
					drained = true
				}
			}
			require.Equal(t, 1, be.count(&be.subs, "doc://a"))
			require.Zero(t, be.count(&be.subs, "doc://b"))
		})
	}
}

// On shutdown every listen stream ends with its result (resultType
// complete, the subscription id in _meta).
func TestModernListenEndsWithResultOnShutdown(t *testing.T) {
	be := harness.StartBackend(t, "be", harness.Stateless, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, be.Config())
	ls := openListenStream(t, v, `"bye"`, map[string]any{"toolsListChanged": true})
	go func() { _ = v.Server.Close() }()
	m := ls.next(t)
	require.Equal(t, "bye", m["id"])
	res := m["result"].(map[string]any)
	require.Equal(t, "complete", res["resultType"])
	requireSubscriptionID(t, res, `"bye"`)
}

// A Modern backend dropping vmcp's listen streams: vmcp reopens them with
// backoff, covers the gap with a resources/updated for the subscribed URI,
// and later updates flow again.
func TestModernListenBackendDropIsReopened(t *testing.T) {
	var docListens atomic.Int32
	drop := make(chan struct{})
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") != "subscriptions/listen" {
				h.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte("doc://a")) {
				docListens.Add(1)
			}
			select {
			case <-drop: // reopened: served normally
			default: // cut when drop closes
				c, cancel := context.WithCancel(r.Context())
				defer cancel()
				go func() {
					select {
					case <-drop:
						cancel()
					case <-c.Done():
					}
				}()
				r = r.WithContext(c)
			}
			h.ServeHTTP(w, r)
		})
	}
	be := startSubBackend(t, "be", harness.Stateless, nil, func(s *mcp.Server) { addDocs(s) }, wrap)
	v := harness.StartVMCP(t, nil, be.cfg)
	ls := openListenStream(t, v, `"S"`, map[string]any{"resourceSubscriptions": []string{"doc://a"}})
	require.Equal(t, int32(1), docListens.Load())

	close(drop)
	m := ls.next(t)
	require.Equal(t, "notifications/resources/updated", m["method"], "the gap is covered once the stream is reopened")
	require.Equal(t, int32(2), docListens.Load())
	require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://a"}))
	m = ls.next(t)
	require.Equal(t, "doc://a", m["params"].(map[string]any)["uri"])
	requireSubscriptionID(t, m["params"].(map[string]any), `"S"`)
}
