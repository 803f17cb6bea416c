package embeddings

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake answers every input with [len(text), 0, index+1] in reverse order,
// checking the model and the bearer token.
func fake(t *testing.T, requests *atomic.Int32) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var in struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Model != "m" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(in.Input) - 1; i >= 0; i-- {
			data = append(data, item{i, []float32{float32(len(in.Input[i])), 0, float32(i + 1)}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(s.Close)
	return s
}

// TestEmbedBatchesOrdersAndNormalises: inputs beyond a batch take more
// requests; vectors come back in input order, unit length.
func TestEmbedBatchesOrdersAndNormalises(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	c := New(fake(t, &requests).URL, "m", "k")
	texts := make([]string, BatchSize+2)
	for i := range texts {
		texts[i] = strings.Repeat("x", i%7+1)
	}
	vs, err := c.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vs, len(texts))
	assert.Equal(t, int32(2), requests.Load())
	assert.InDelta(t, 1, Dot(vs[3], vs[3]), 1e-6)
	assert.Greater(t, vs[0][2], float32(0))
	assert.InDelta(t, 1, float64(vs[3][0]/vs[3][2]), 1e-5, "vector of input 3: [4, 0, 4]")
}

// TestEmbedErrorsNameTheProblemNotTheKey: a refusal names the status, and
// never carries the API key.
func TestEmbedErrorsNameTheProblemNotTheKey(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	c := New(fake(t, &requests).URL, "other-model", "k")
	_, err := c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "400 Bad Request")
	assert.NotContains(t, err.Error(), "Bearer")
	_, err = order(nil, 1)
	assert.ErrorContains(t, err, "no vector for input 0")
}
