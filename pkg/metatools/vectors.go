package metatools

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/embeddings"
	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// queryTimeout bounds embedding a query on the request path; past it, or
// on any error, the search is lexical only.
const queryTimeout = 2 * time.Second

// maxEmbedText bounds the text embedded per tool, in bytes.
const maxEmbedText = 2000

// embedText is what a tool's vector is made of: its name, title and
// description.
func embedText(t *mcp.Tool) string {
	s := t.Name + ". " + t.Title + ". " + t.Description
	if len(s) > maxEmbedText {
		s = s[:maxEmbedText]
	}
	return s
}

// embedMissing embeds the tools of cat whose text has no vector yet (off
// the request path) and keeps only the current tools' vectors.
func (t *Tools) embedMissing(ctx context.Context, cat *aggregator.Catalogue) {
	var missing []string
	t.mu.Lock()
	next := make(map[string][]float32, len(cat.Routable))
	for _, tool := range cat.Routable {
		text := embedText(tool)
		if v, ok := t.vecs[text]; ok {
			next[text] = v
		} else if !slices.Contains(missing, text) {
			missing = append(missing, text)
		}
	}
	t.mu.Unlock()
	if len(missing) > 0 {
		vs, err := t.emb.Embed(ctx, missing)
		if err != nil {
			t.log.Warn("tool search: embedding the tools failed; ranking those lexically", "tools", len(missing), "err", err)
		}
		for i, v := range vs {
			next[missing[i]] = v
		}
	}
	t.mu.Lock()
	t.vecs = next
	t.mu.Unlock()
}

// vectorsOf are the known vectors of tools, by document (nil: none known).
func (t *Tools) vectorsOf(tools []*mcp.Tool) [][]float32 {
	if t.emb == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([][]float32, len(tools))
	for i, tool := range tools {
		out[i] = t.vecs[embedText(tool)]
	}
	return out
}

// blend fuses the lexical hits with the depth nearest allowed tools to the
// query's vector; without vectors, or when the query cannot be embedded in
// time, it returns the lexical hits.
func (t *Tools) blend(ctx context.Context, x *indexed, query string, lexical []toolsearch.Hit, limit int, allow func(int) bool) []toolsearch.Hit {
	if x.vecs == nil {
		return cut(lexical, limit)
	}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	qv, err := t.emb.Embed(qctx, []string{query})
	if err != nil || len(qv) != 1 {
		t.log.Debug("tool search: embedding the query failed; lexical ranking only", "err", err)
		return cut(lexical, limit)
	}
	var near []toolsearch.Hit
	for doc, v := range x.vecs {
		if v != nil && allow(doc) {
			near = append(near, toolsearch.Hit{Doc: doc, Key: x.tools[doc].Name, Score: float64(embeddings.Dot(qv[0], v))})
		}
	}
	slices.SortStableFunc(near, func(a, b toolsearch.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.Doc - b.Doc
	})
	return toolsearch.Fuse([][]toolsearch.Hit{lexical, cut(near, max(limit, toolsearch.FuseDepth))}, limit)
}

func cut(hs []toolsearch.Hit, n int) []toolsearch.Hit {
	if len(hs) > n {
		return hs[:n]
	}
	return hs
}
