// Package embeddings is a client of an OpenAI-compatible embeddings
// endpoint (POST {"model", "input": [texts]} → {"data": [{"index",
// "embedding"}]}), such as a local model server, for tool search's hybrid
// ranking. Vectors come back normalised to unit length.
package embeddings

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"
)

// Limits: texts per request, bytes of one response, and the time one
// request may take.
const (
	BatchSize        = 128
	maxResponseBytes = 64 << 20
	requestTimeout   = 30 * time.Second
)

// Client embeds texts with one model at one endpoint. It is safe for
// concurrent use.
type Client struct {
	url, model, apiKey string
	http               *http.Client
}

// New returns a client of the endpoint url (the full /v1/embeddings URL)
// for model; apiKey, if set, is sent as a bearer token and never appears
// in errors.
func New(url, model, apiKey string) *Client {
	return &Client{url: url, model: model, apiKey: apiKey, http: &http.Client{Timeout: requestTimeout}}
}

// Embed returns one unit vector per text, in order, BatchSize texts per
// request. Errors name the endpoint's status or what was wrong with its
// answer.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += BatchSize {
		vs, err := c.batch(ctx, texts[start:min(start+BatchSize, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// batch embeds one request's texts.
func (c *Client) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": c.model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings: endpoint answered %s", resp.Status)
	}
	var res struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&res); err != nil {
		return nil, fmt.Errorf("embeddings: reading the answer: %w", err)
	}
	return order(res.Data, len(texts))
}

// order places each embedding at its index, normalised, checking that
// every text got one vector of one dimension.
func order(data []struct {
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}, n int) ([][]float32, error) {
	out := make([][]float32, n)
	for _, d := range data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embeddings: the answer's data has a bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) != len(data[0].Embedding) {
			return nil, fmt.Errorf("embeddings: vectors of %d and %d dimensions", len(d.Embedding), len(data[0].Embedding))
		}
		out[d.Index] = normalise(d.Embedding)
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("embeddings: no vector for input %d of %d", i, n)
		}
	}
	return out, nil
}

// normalise scales v to unit length (a zero vector stays zero).
func normalise(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	k := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= k
	}
	return v
}

// Dot is the dot product of two vectors of one dimension (their cosine
// when both are unit vectors).
func Dot(a, b []float32) float32 {
	var s float32
	for i := range min(len(a), len(b)) {
		s += a[i] * b[i]
	}
	return s
}
