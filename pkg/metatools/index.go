package metatools

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/embeddings"
	"github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// maxCached bounds the indexes kept: the current shared catalogue's and
// those of principals with their own backends (aggregator.For).
const maxCached = 16

// indexed is one catalogue's search index and, per document, its tool and
// backend.
type indexed struct {
	ix       *toolsearch.Index
	tools    []*mcp.Tool
	backends []string
	vecs     [][]float32              // by document, nil where unknown; nil: no embeddings
	js       []atomic.Pointer[[]byte] // by document: its Found as JSON, once marshalled
}

// Tools serves search_tools over the catalogue's tools. It is safe for
// concurrent use.
type Tools struct {
	agg    *aggregator.Aggregator
	policy *policy.Policy // nil: every principal sees everything
	log    *slog.Logger
	emb    *embeddings.Client // nil: lexical ranking only

	mu    sync.Mutex
	cache map[*aggregator.Catalogue]*indexed
	order []*aggregator.Catalogue // oldest first
	vecs  map[string][]float32    // tool vectors by embedText, of the current catalogue

	kick chan struct{} // a catalogue change to index (one pending at most)

	imu     sync.Mutex          // serialises finding a catalogue unindexed and indexing it
	bmu     sync.Mutex          // serialises builds
	builder *toolsearch.Builder // the tools' analyses from one build to the next

	m metrics // set by Instrument
}

// New returns the tool search over agg's catalogues, filtered by p (nil:
// no filtering), blending in emb's vectors when emb is not nil. Call Run
// to follow the catalogue.
func New(agg *aggregator.Aggregator, p *policy.Policy, emb *embeddings.Client, log *slog.Logger) *Tools {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tools{agg: agg, policy: p, emb: emb, log: log, cache: map[*aggregator.Catalogue]*indexed{}, kick: make(chan struct{}, 1),
		builder: toolsearch.NewBuilder()}
	agg.OnChange(func(_, _ *aggregator.Catalogue, kinds []aggregator.Kind) {
		for _, k := range kinds {
			if k == aggregator.KindTools {
				select {
				case t.kick <- struct{}{}:
				default: // a rebuild is pending and will see this catalogue
				}
				return
			}
		}
	})
	return t
}

// Run indexes the current catalogue, then each new one as the catalogue
// changes, off the request path (with embeddings: the new tools' vectors
// first), until ctx ends.
func (t *Tools) Run(ctx context.Context) {
	for {
		t.refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.kick:
		}
	}
}

// refresh indexes the current catalogue, embedding its new tools first
// (then rebuilding even if a search indexed it meanwhile, for the vectors).
func (t *Tools) refresh(ctx context.Context) {
	cat := t.agg.Current()
	if t.emb == nil {
		t.index(cat)
		return
	}
	t.embedMissing(ctx, cat)
	t.imu.Lock()
	defer t.imu.Unlock()
	t.store(cat, t.build(cat))
}

// index returns cat's index, building and caching it if needed; a search
// that finds cat being built waits for that build instead of making
// another, and Run does not rebuild what a search has indexed.
func (t *Tools) index(cat *aggregator.Catalogue) *indexed {
	if x := t.cached(cat); x != nil {
		return x
	}
	t.imu.Lock()
	defer t.imu.Unlock()
	if x := t.cached(cat); x != nil {
		return x
	}
	return t.store(cat, t.build(cat))
}

// cached is cat's index if it has one.
func (t *Tools) cached(cat *aggregator.Catalogue) *indexed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cache[cat]
}

// store caches x as cat's index (replacing one a search built before Run
// had embedded the catalogue's tools) and returns it.
func (t *Tools) store(cat *aggregator.Catalogue, x *indexed) *indexed {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.cache[cat]; !ok {
		t.order = append(t.order, cat)
	}
	t.cache[cat] = x
	if len(t.order) > maxCached {
		delete(t.cache, t.order[0])
		t.order = t.order[1:]
	}
	return x
}

// build indexes cat's routable tools, with the vectors known for them.
func (t *Tools) build(cat *aggregator.Catalogue) *indexed {
	x := &indexed{tools: cat.Routable, backends: make([]string, len(cat.Routable)), vecs: t.vectorsOf(cat.Routable),
		js: make([]atomic.Pointer[[]byte], len(cat.Routable))}
	docs := make([]toolsearch.Doc, len(cat.Routable))
	for i, tool := range cat.Routable {
		_, r, _ := cat.Tool(tool.Name)
		x.backends[i] = r.Backend
		docs[i] = toolsearch.Doc{Key: tool.Name, Name: ownName(tool.Name, r), Description: tool.Description,
			Params: toolsearch.ParamsOf(tool.InputSchema), Backend: r.Backend, BackendDescription: cat.BackendDescription(r.Backend)}
		if tool.Title != "" {
			docs[i].Description = tool.Title + ". " + tool.Description
		}
	}
	t.bmu.Lock()
	start := time.Now()
	x.ix = t.builder.Build(docs)
	observe(t.m.build, start)
	t.bmu.Unlock()
	return x
}

// ownName is the name a tool advertised as name is indexed by: its
// backend's own (r.Name), when name only decorates it ("{backend}_{name}":
// the backend's words are indexed as its own field, not again as the
// tool's name), else name (an operator's rename).
func ownName(name string, r aggregator.Route) string {
	if r.Name != "" && strings.Contains(name, r.Name) {
		return r.Name
	}
	return name
}

// found is document doc as a search result.
func (x *indexed) found(doc int) Found {
	tool := x.tools[doc]
	return Found{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema, Backend: x.backends[doc]}
}

// result is {"tools": [...]} for hits, each document's JSON marshalled
// once, the first time it is found, and kept with the index.
func (x *indexed) result(hits []toolsearch.Hit) []byte {
	out := append(make([]byte, 0, 1024*len(hits)+16), `{"tools":[`...)
	for i, h := range hits {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, x.foundJSON(h.Doc)...)
	}
	return append(out, "]}"...)
}

// foundJSON is document doc's Found as JSON (a tool whose schema does not
// marshal is shown with an empty object schema).
func (x *indexed) foundJSON(doc int) []byte {
	if b := x.js[doc].Load(); b != nil {
		return *b
	}
	b, err := json.Marshal(x.found(doc))
	if err != nil {
		f := x.found(doc)
		f.InputSchema = map[string]any{"type": "object"}
		b, _ = json.Marshal(f)
	}
	x.js[doc].Store(&b)
	return b
}
