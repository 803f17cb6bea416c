package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// clHop is one request as the balancer routed it.
type clHop struct {
	method, session, lastEventID, node string
}

// clBalancer is a round-robin HTTP load balancer over the nodes that
// knows nothing about MCP: a few lines of httputil.ReverseProxy. A GET
// with Last-Event-ID is sent to another node than that session's previous
// GET, and cutStreams drops every open GET (a network blip).
type clBalancer struct {
	URL string

	diag    *clDiag
	mu      sync.Mutex
	nodes   []*clNode
	down    map[string]bool
	next    int
	hops    []clHop
	lastGET map[string]string
	streams map[int]context.CancelFunc
	seq     int
}

func clStartBalancer(t testing.TB, nodes ...*clNode) *clBalancer {
	b := &clBalancer{diag: clDiagFor(t), nodes: nodes, down: map[string]bool{}, lastGET: map[string]string{}, streams: map[int]context.CancelFunc{}}
	hs := httptest.NewUnstartedServer(b)
	hs.Config.ErrorLog = b.diag.errorLog("balancer's http server")
	hs.Start()
	b.URL = hs.URL + "/mcp"
	t.Cleanup(func() {
		b.cutStreams()
		hs.CloseClientConnections()
		hs.Close()
	})
	return b
}

func (b *clBalancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The proxy's transport reads the body once more after sending it (to
	// see its EOF), maybe after the node has answered: net/http closes a
	// request's body when its response begins, unless full duplex, and the
	// transport then drops the connection mid-response (a cut initialize
	// or tools/call stream, 1 run in 40-80 on 2 loaded cores).
	_ = http.NewResponseController(w).EnableFullDuplex()
	hop := clHop{method: r.Method, session: r.Header.Get("Mcp-Session-Id"), lastEventID: r.Header.Get("Last-Event-ID")}
	ctx := r.Context()
	b.mu.Lock()
	var n *clNode
	for range 2 * len(b.nodes) {
		c := b.nodes[b.next%len(b.nodes)]
		b.next++
		if !b.down[c.name] && !(hop.lastEventID != "" && b.lastGET[hop.session] == c.name) {
			n = c
			break
		}
	}
	hop.node = n.name
	b.hops = append(b.hops, hop)
	if r.Method == http.MethodGet {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		id := b.seq
		b.seq++
		b.streams[id] = cancel
		b.lastGET[hop.session] = n.name
		defer func() { b.mu.Lock(); delete(b.streams, id); b.mu.Unlock(); cancel() }()
	}
	b.mu.Unlock()
	target, _ := url.Parse(n.base)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.Host = pr.In.Host },
		FlushInterval: -1,
		ErrorLog:      b.diag.errorLog("balancer"),
	}
	rec, start := &clRecorder{ResponseWriter: w}, time.Now()
	defer b.diag.hop(hop, start, rec) // also when the proxy aborts the response
	rp.ServeHTTP(rec, r.WithContext(ctx))
}

// cutStreams drops every open GET stream at the balancer.
func (b *clBalancer) cutStreams() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, cancel := range b.streams {
		cancel()
	}
}

// markDown stops routing to node name (a health-checking balancer would).
func (b *clBalancer) markDown(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down[name] = true
}

// hopsOf lists the requests of one session, in order.
func (b *clBalancer) hopsOf(session string) []clHop {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []clHop
	for _, h := range b.hops {
		if h.session == session {
			out = append(out, h)
		}
	}
	return out
}
