package subscriptions

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingSink records what it is sent; after fail is set it errors.
type recordingSink struct {
	mu   sync.Mutex
	sent []string
	fail bool
}

func (s *recordingSink) Send(method string, params mcp.Params) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("stream closed")
	}
	b, _ := json.Marshal(params)
	s.sent = append(s.sent, method+" "+string(b))
	return nil
}

func TestStreamSendStampsSubscriptionID(t *testing.T) {
	r := NewRegistry()
	sink := &recordingSink{}
	s := r.Listen(json.RawMessage(`"L1"`), mcp.NotificationSubscriptions{ToolsListChanged: true}, sink)
	require.NoError(t, s.Send("notifications/tools/list_changed", &mcp.ToolListChangedParams{}))
	require.NoError(t, s.Send("notifications/x", nil))
	assert.Equal(t, []string{
		`notifications/tools/list_changed {"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}`,
		`notifications/x null`,
	}, sink.sent)
	sink.fail = true
	assert.Error(t, s.Send("notifications/x", nil))
}

func TestRegistryListenReleaseLookup(t *testing.T) {
	r := NewRegistry()
	a := r.Listen(json.RawMessage(`1`), mcp.NotificationSubscriptions{}, &recordingSink{})
	b := r.Listen(json.RawMessage(`1`), mcp.NotificationSubscriptions{}, &recordingSink{}) // another client, same id
	c := r.Listen(json.RawMessage(`"1"`), mcp.NotificationSubscriptions{}, &recordingSink{})
	assert.Equal(t, 3, r.Len())
	assert.Equal(t, []*Stream{a, b}, r.Lookup(json.RawMessage(`1`)))
	assert.Equal(t, []*Stream{c}, r.Lookup(json.RawMessage(`"1"`)))

	r.Release(a)
	r.Release(a) // idempotent
	assert.Equal(t, []*Stream{b}, r.Lookup(json.RawMessage(`1`)))
	r.Release(b)
	r.Release(c)
	assert.Zero(t, r.Len())
	assert.Empty(t, r.Lookup(json.RawMessage(`1`)))
}

func TestRegistryCloseEndsStreams(t *testing.T) {
	r := NewRegistry()
	s := r.Listen(json.RawMessage(`7`), mcp.NotificationSubscriptions{}, &recordingSink{})
	select {
	case <-s.Done():
		t.Fatal("done before Close")
	default:
	}
	r.Close()
	r.Close() // idempotent
	<-s.Done()
	late := r.Listen(json.RawMessage(`8`), mcp.NotificationSubscriptions{}, &recordingSink{})
	<-late.Done()
	assert.Equal(t, 1, r.Len(), "streams stay registered until released")
	r.Release(s)
	assert.Zero(t, r.Len())
}

func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				s := r.Listen(json.RawMessage{byte('0' + i%10)}, mcp.NotificationSubscriptions{}, &recordingSink{})
				_ = s.Send("notifications/x", &mcp.ToolListChangedParams{})
				r.Lookup(s.ID)
				r.Release(s)
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, r.Len())
}
