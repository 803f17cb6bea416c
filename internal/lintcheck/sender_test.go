package lintcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"
	"testing"
)

// Stubs of the packages whose sends the rule knows, at their real import
// paths (the rule matches types by package path and name).
const (
	httpStub = `package http

type Request struct{}
type Response struct{}
type RoundTripper interface{ RoundTrip(*Request) (*Response, error) }
type Client struct{ Transport RoundTripper }
type Transport struct{}

func (c *Client) Do(r *Request) (*Response, error)       { return nil, nil }
func (c *Client) Get(url string) (*Response, error)      { return nil, nil }
func (c *Client) CloseIdleConnections()                  {}
func (t *Transport) RoundTrip(*Request) (*Response, error) { return nil, nil }
func Get(url string) (*Response, error)                  { return nil, nil }
func NewRequest(method, url string) (*Request, error)    { return nil, nil }
`
	mcpStub = `package mcp

type ClientSession struct{}
type Params struct{}

func (cs *ClientSession) CallTool(p *Params) error  { return nil }
func (cs *ClientSession) ListTools(p *Params) error { return nil }
func (cs *ClientSession) Subscribe(p *Params) error { return nil }
func (cs *ClientSession) ID() string                { return "" }
func (cs *ClientSession) Close() error              { return nil }
`
)

// sendCheck type-checks fixture files (slash paths relative to the
// module root; a directory is a package example.com/m/<dir>) against the
// stubs and returns the one-sender report lines.
func sendCheck(t *testing.T, files map[string]string) []string {
	t.Helper()
	im := &fixtureImporter{fset: token.NewFileSet(), pkgs: map[string]map[string]*ast.File{}, done: map[string]*types.Package{}}
	add := func(importPath, path, src string) {
		f, err := parser.ParseFile(im.fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if im.pkgs[importPath] == nil {
			im.pkgs[importPath] = map[string]*ast.File{}
		}
		im.pkgs[importPath][path] = f
	}
	add("net/http", "stub/http.go", httpStub)
	add(sdkMCP, "stub/mcp.go", mcpStub)
	var paths []string
	for path, src := range files {
		add(module+"/"+dirOf(path), path, src)
		paths = append(paths, module+"/"+dirOf(path))
	}
	sort.Strings(paths)
	for _, p := range paths {
		if _, err := im.Import(p); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, f := range SendFindings(im.typed) {
		out = append(out, f.String())
	}
	return out
}

// fixtureImporter type-checks the fixture and stub packages on demand.
type fixtureImporter struct {
	fset  *token.FileSet
	pkgs  map[string]map[string]*ast.File // import path to file path to file
	done  map[string]*types.Package
	typed []*Typed // the fixture packages (not the stubs)
}

func (im *fixtureImporter) Import(path string) (*types.Package, error) {
	if p := im.done[path]; p != nil {
		return p, nil
	}
	files := im.pkgs[path]
	if files == nil {
		return nil, fmt.Errorf("no fixture package %s", path)
	}
	var list []*ast.File
	for _, f := range files {
		list = append(list, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: im}
	p, err := conf.Check(path, im.fset, list, info)
	if err != nil {
		return nil, err
	}
	im.done[path] = p
	if strings.HasPrefix(path, module+"/") {
		im.typed = append(im.typed, &Typed{Fset: im.fset, Files: files, Info: info})
	}
	return p, nil
}

// sendsOf is a fixture file of package p importing the stubs, with body
// after the imports.
func sendsOf(p, body string) string {
	return "package " + p + `

import (
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var _ *http.Request
var _ *sdk.ClientSession
` + body
}

// dispatchSends is a client's request sent past pkg/upstream every way the
// rule knows, and uses that send nothing.
const dispatchSends = `
type wrapped struct{ *http.Client }

func callTool(cs *sdk.ClientSession, hc *http.Client, rt http.RoundTripper) {
	_ = cs.CallTool(nil)
	list := cs.ListTools
	_ = list
	_, _ = cs.ID(), cs.Close()
	r, _ := http.NewRequest("POST", "http://backend")
	_, _ = hc.Do(r)
	_, _ = wrapped{hc}.Do(r)
	_, _ = rt.RoundTrip(r)
	_, _ = (&http.Transport{}).RoundTrip(r)
	_, _ = hc.Transport.RoundTrip(r)
	hc.CloseIdleConnections()
}

type headers struct{ base http.RoundTripper }

// RoundTrip delegates: whoever called it sent.
func (h *headers) RoundTrip(r *http.Request) (*http.Response, error) { return h.base.RoundTrip(r) }

// Do is not net/http's.
func (h *headers) Do(r *http.Request) {}

func local(h *headers) { h.Do(nil) }
`

// ownedTransport is upstream's transport: RawSession.Call sends through
// the shared transport.RoundTrip; ID sends nothing.
var ownedTransport = map[string]string{
	"pkg/backends/relay.go": `package backends

import (
	"net/http"

	"example.com/m/pkg/backends/transport"
)

type RawSession struct{ hc *http.Client }

func (s *RawSession) Call() error { _, err := transport.RoundTrip(s.hc); return err }
func (s *RawSession) post() error { return s.Call() }
func (s *RawSession) ID() string  { return "" }
`,
	"pkg/backends/transport/transport.go": sendsOf("transport", `
func RoundTrip(hc *http.Client) (*http.Response, error) { return hc.Transport.RoundTrip(nil) }
`),
}

// msg ends every one-sender finding.
const msg = " outside pkg/upstream: send backend requests through upstream.Core.Do"

// withOwned adds ownedTransport to fixture files.
func withOwned(more map[string]string) map[string]string {
	for p, s := range ownedTransport {
		more[p] = s
	}
	return more
}

var oneSenderCases = []struct {
	name  string
	files map[string]string
	want  []string
}{
	{"every send past upstream fires, whatever its spelling", map[string]string{
		"pkg/dispatch/d.go": sendsOf("dispatch", dispatchSends),
		"pkg/p/p.go":        sendsOf("p", "\nfunc get() { _, _ = http.Get(\"http://backend\") }\n"),
	}, []string{
		"pkg/dispatch/d.go:15: one-sender: (*mcp.ClientSession).CallTool" + msg,
		"pkg/dispatch/d.go:16: one-sender: (*mcp.ClientSession).ListTools" + msg,
		"pkg/dispatch/d.go:20: one-sender: (*http.Client).Do" + msg,
		"pkg/dispatch/d.go:21: one-sender: (*http.Client).Do" + msg,
		"pkg/dispatch/d.go:22: one-sender: RoundTrip" + msg,
		"pkg/dispatch/d.go:23: one-sender: RoundTrip" + msg,
		"pkg/dispatch/d.go:24: one-sender: RoundTrip" + msg,
		"pkg/p/p.go:12: one-sender: http.Get" + msg,
	}},
	{"the sender, the allowlist, tests and test programs may send", map[string]string{
		"pkg/upstream/u.go":         sendsOf("upstream", dispatchSends),
		"pkg/outbound/o.go":         sendsOf("outbound", dispatchSends),
		"cmd/vmcp/main.go":          sendsOf("main", dispatchSends+"\nfunc main() {}\n"),
		"pkg/dispatch/d_test.go":    sendsOf("dispatch", dispatchSends),
		"test/bench/b.go":           sendsOf("bench", dispatchSends),
		"pkg/backends/supervise.go": sendsOf("backends", "\ntype Backend struct{}\n\nfunc (b *Backend) probe(cs *sdk.ClientSession) { _ = cs.CallTool(nil) }\n"),
	}, nil},
	{"an allowlisted file's other functions may not", map[string]string{
		"pkg/backends/supervise.go": sendsOf("backends", "\ntype Backend struct{}\n\nfunc (b *Backend) probe(cs *sdk.ClientSession) { _ = cs.CallTool(nil) }\n"+
			"\nfunc (b *Backend) call(cs *sdk.ClientSession) { _ = cs.Subscribe(nil) }\n"),
	}, []string{"pkg/backends/supervise.go:16: one-sender: (*mcp.ClientSession).Subscribe" + msg}},
	{"upstream's transport sends only for upstream", withOwned(map[string]string{
		"pkg/backends/roots.go": sendsOf("backends", "\nfunc notify(s *RawSession) { _, _ = s.Call(), s.ID() }\n"),
		"pkg/dispatch/d.go": `package dispatch

import "example.com/m/pkg/backends"

func relay(s *backends.RawSession) (string, error) { return s.ID(), s.Call() }
`,
		"pkg/upstream/u.go": `package upstream

import "example.com/m/pkg/backends"

func do(s *backends.RawSession) error { return s.Call() }
`,
	}), []string{
		"pkg/backends/roots.go:12: one-sender: backends.(*RawSession).Call" + msg,
		"pkg/dispatch/d.go:5: one-sender: backends.(*RawSession).Call" + msg,
	}},
}

func TestOneSenderRule(t *testing.T) {
	for _, tc := range oneSenderCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assertLines(t, sendCheck(t, tc.files), tc.want...)
		})
	}
}
