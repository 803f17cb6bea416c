package metatools

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/embeddings"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// concepts are the fake model's meanings: each word of a group shares one
// dimension; any other word is hashed into the rest.
var concepts = [][]string{{"car", "automobile", "vehicle"}, {"hire", "rental", "rent", "leasing"}}

func fakeVector(text string) []float32 {
	v := make([]float32, 64)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		dim := -1
		for i, g := range concepts {
			for _, x := range g {
				if w == x {
					dim = i
				}
			}
		}
		if dim < 0 {
			h := fnv.New32a()
			h.Write([]byte(w))
			dim = len(concepts) + int(h.Sum32()%uint32(64-len(concepts)))
		}
		v[dim]++
	}
	return v
}

// fakeEmbeddings is an OpenAI-compatible /v1/embeddings server of the fake
// model; it counts the texts it embeds, and fails while down is set.
func fakeEmbeddings(t *testing.T, texts *atomic.Int32, down *atomic.Bool) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		var in struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		texts.Add(int32(len(in.Input)))
		var data []map[string]any
		for i, s := range in.Input {
			data = append(data, map[string]any{"index": i, "embedding": fakeVector(s)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(s.Close)
	return s
}

func rentalCatalogue() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "car_hire", Description: "Book a car for hire at an airport."},
		{Name: "bike_repair", Description: "Find a shop that fixes bicycles."},
		{Name: "flight_search", Description: "Search flights between two airports."},
	}
}

// TestEmbeddingsFindWhatWordsMiss: a query sharing no word with the tool
// ("vehicle leasing" for "Book a car for hire") finds it once the tools
// are embedded; tools are embedded once, a new tool alone after a change;
// with the endpoint down the search is lexical and still answers.
func TestEmbeddingsFindWhatWordsMiss(t *testing.T) {
	t.Parallel()
	var texts atomic.Int32
	var down atomic.Bool
	srv := fakeEmbeddings(t, &texts, &down)
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	tools := New(agg, nil, embeddings.New(srv.URL, "fake", ""), nil)
	agg.Update(aggregator.Inventory{Backend: "travel", Tools: rentalCatalogue()})
	tools.refresh(context.Background())
	assert.Equal(t, int32(3), texts.Load(), "each tool embedded once")
	req := &upstream.Request{Method: "tools/call", Name: SearchName}
	lexical := New(agg, nil, nil, nil).Search(context.Background(), req, "vehicle leasing", 1)
	assert.Empty(t, lexical, "no word in common: the lexical index finds nothing")

	got := tools.Search(context.Background(), req, "vehicle leasing", 1)
	require.Len(t, got, 1)
	assert.Equal(t, "travel_car_hire", got[0].Name)

	agg.Update(aggregator.Inventory{Backend: "travel", Tools: append(rentalCatalogue(), &mcp.Tool{Name: "hotel_book", Description: "Book a hotel room."})})
	before := texts.Load()
	tools.refresh(context.Background())
	assert.Equal(t, int32(1), texts.Load()-before, "only the new tool embedded")

	down.Store(true)
	got = tools.Search(context.Background(), req, "repair my bicycle", 1)
	require.Len(t, got, 1, "the endpoint down: lexical results")
	assert.Equal(t, "travel_bike_repair", got[0].Name)
}
