package lintcheck

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The one-sender rule (issue 28: "pkg/upstream is the only code that sends
// a backend anything on a client's behalf"). Outside pkg/upstream and the
// allowlist below it flags (rule one-sender) every use, called or taken as
// a value, of
//   - a method of the go-sdk's *mcp.ClientSession that sends the backend
//     something (every method but ID, InitializeResult, Close and Wait:
//     CallTool, GetPrompt, ReadResource, Complete, Subscribe, List*, Ping,
//     NotifyProgress, ..., and whatever the SDK adds);
//   - an HTTP send: (*http.Client).Do, Get, Head, Post, PostForm, the
//     package-level http.Get, Head, Post, PostForm, and a RoundTrip method
//     of any type with http.RoundTripper's signature (the interface's
//     included), except a RoundTrip method's call of the one it wraps
//     (middleware delegates the send; whoever called it sent);
//   - a function of upstream's own transports (the "owned" entries: the
//     RawSession and ConnSession files) that sends, directly or through
//     another such function: only pkg/upstream and those files may call
//     them.
//
// Detection is by type (go/types), not by name, so a renamed import or a
// wrapper's field does not hide a send. Test files, test/ and this package
// are exempt, as for the wire rules.

// sdkMCP is the go-sdk's mcp package, whose ClientSession sends.
const sdkMCP = "github.com/modelcontextprotocol/go-sdk/mcp"

// sessionQuiet are the *mcp.ClientSession methods that send nothing.
var sessionQuiet = map[string]bool{"ID": true, "InitializeResult": true, "Close": true, "Wait": true}

// clientSends are the *http.Client methods and net/http functions that send.
var clientSends = map[string]bool{"Do": true, "Get": true, "Head": true, "Post": true, "PostForm": true}

// allowed is one allowlist entry: a file or directory (a path ending in
// "/") and, if set, one function in it (its symbol as findings spell it).
// An owned entry is upstream's transport: its sending functions are sends
// themselves outside owned code. Each entry says why; keep the list small.
type allowed struct {
	path, symbol string
	owned        bool
	why          string
}

var senderAllow = []allowed{
	{"pkg/upstream/", "", true, "the one sender"},
	{"pkg/backends/relay.go", "", true, "upstream's streamable HTTP transport (RawSession)"},
	{"pkg/backends/relay_modern.go", "", true, "upstream's streamable HTTP transport (RawSession, Modern)"},
	{"pkg/backends/connmux.go", "", true, "upstream's stdio and SSE transport (ConnSession)"},
	{"pkg/backends/connsession.go", "", true, "upstream's stdio and SSE transport (ConnSession)"},
	{"pkg/backends/transport/transport.go", "RoundTrip", true, "the HTTP send RawSession and Direct share"},
	{"pkg/backends/supervise.go", "(*Backend).probe", false, "the control connection's health probe"},
	{"pkg/backends/direct.go", "(*Backend).Direct", false, "server/discover, the Modern health probe"},
	{"pkg/backends/list.go", "(*Backend).inventory", false, "the control connection's list fetches (also a per-principal backend's discovery)"},
	{"pkg/backends/transport/getstream.go", "(*steadyTransport).once", false, "the control connection's GET stream (notifications)"},
	{"pkg/backends/sink.go", "(*Backend).RaiseLogLevel", false, "logging/setLevel when vmcp opens a session it owns (control, keyed)"},
	{"cmd/", "", false, "command-line tools: vmcp's own client, not a client's request"},
	{"pkg/outbound/", "", false, "token endpoints (RFC 8693 exchange, client credentials): vmcp's own credentials"},
	{"pkg/auth/", "", false, "the issuer's JWKS and discovery: vmcp's own inbound auth"},
	{"pkg/embeddings/", "", false, "the embeddings endpoint tool search calls: not a backend"},
	{"pkg/status/", "", false, "vmcp status's client of vmcp's own endpoint"},
}

// allowedAt returns the entry that covers symbol in path, or nil.
func allowedAt(path, symbol string) *allowed {
	for i, a := range senderAllow {
		in := path == a.path || (strings.HasSuffix(a.path, "/") && strings.HasPrefix(path, a.path))
		if in && (a.symbol == "" || a.symbol == symbol) {
			return &senderAllow[i]
		}
	}
	return nil
}

// senderRuleApplies reports whether the one-sender rule checks path.
func senderRuleApplies(path string) bool {
	switch {
	case strings.HasSuffix(path, "_test.go"),
		strings.HasPrefix(path, "test/"),
		strings.HasPrefix(path, "internal/lintcheck/"):
		return false
	}
	return true
}

// sendDecl is one top-level declaration the rule looks at.
type sendDecl struct {
	p     *Typed
	path  string
	decl  ast.Decl
	sym   string
	wraps bool     // a RoundTrip method: its RoundTrip calls delegate
	allow *allowed // nil: not allowed to send
}

// SendFindings checks the one-sender rule in the typed packages.
func SendFindings(pkgs []*Typed) []Finding {
	var decls []sendDecl
	for _, p := range pkgs {
		for path, f := range p.Files {
			if !senderRuleApplies(path) {
				continue
			}
			for _, d := range f.Decls {
				sym, wraps := declSymbol(d)
				decls = append(decls, sendDecl{p, path, d, sym, wraps, allowedAt(path, sym)})
			}
		}
	}
	senders := ownedSenders(decls)
	var out []Finding
	for _, d := range decls {
		if d.allow != nil {
			continue
		}
		d.uses(senders, func(pos token.Pos, what string) {
			out = append(out, Finding{d.path, d.p.Fset.Position(pos).Line, "one-sender", d.sym,
				what + " outside pkg/upstream: send backend requests through upstream.Core.Do"})
		})
	}
	sortFindings(out)
	return out
}

// ownedSenders finds the functions of owned entries that send, directly
// or through one another.
func ownedSenders(decls []sendDecl) map[*types.Func]string {
	senders := map[*types.Func]string{}
	for changed := true; changed; {
		changed = false
		for _, d := range decls {
			fd, ok := d.decl.(*ast.FuncDecl)
			if !ok || d.allow == nil || !d.allow.owned {
				continue
			}
			fn, _ := d.p.Info.Defs[fd.Name].(*types.Func)
			if fn == nil || senders[fn] != "" {
				continue
			}
			d.uses(senders, func(token.Pos, string) {
				if senders[fn] == "" {
					senders[fn], changed = d.sym, true
				}
			})
		}
	}
	return senders
}

// uses calls found for each send in d: a primitive send (sendOf) or a use
// of one of senders. Every name a selector or a call uses is an
// identifier, so looking at identifiers alone sees them all.
func (d sendDecl) uses(senders map[*types.Func]string, found func(token.Pos, string)) {
	ast.Inspect(d.decl, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		fn, _ := d.p.Info.Uses[id].(*types.Func)
		if fn == nil {
			return true
		}
		if s := senders[fn]; s != "" {
			found(id.Pos(), fn.Pkg().Name()+"."+s)
		} else if what := sendOf(fn); what != "" && !(d.wraps && fn.Name() == "RoundTrip") {
			found(id.Pos(), what)
		}
		return false
	})
}

// declSymbol is a declaration's symbol and whether it is a RoundTrip
// method (whose RoundTrip calls delegate).
func declSymbol(d ast.Decl) (string, bool) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return funcSymbol(d), d.Recv != nil && d.Name.Name == "RoundTrip"
	case *ast.GenDecl:
		if len(d.Specs) > 0 {
			return specSymbol(d.Specs[0]), false
		}
	}
	return "-", false
}

// sendOf names the send fn is ("(*mcp.ClientSession).CallTool"), or
// returns "".
func sendOf(fn *types.Func) string {
	if fn.Pkg() == nil {
		return ""
	}
	sig := fn.Type().(*types.Signature)
	if sig.Recv() == nil {
		if fn.Pkg().Path() == "net/http" && clientSends[fn.Name()] {
			return "http." + fn.Name()
		}
		return ""
	}
	if fn.Name() == "RoundTrip" && roundTripSig(sig) {
		return "RoundTrip"
	}
	pkg, name := recvNamed(sig.Recv().Type())
	switch {
	case pkg == sdkMCP && name == "ClientSession" && fn.Exported() && !sessionQuiet[fn.Name()]:
		return "(*mcp.ClientSession)." + fn.Name()
	case pkg == "net/http" && name == "Client" && clientSends[fn.Name()]:
		return "(*http.Client)." + fn.Name()
	}
	return ""
}

// roundTripSig reports whether sig is func(*http.Request) (*http.Response, error).
func roundTripSig(sig *types.Signature) bool {
	if sig.Params().Len() != 1 || sig.Results().Len() != 2 {
		return false
	}
	p, n := recvNamed(sig.Params().At(0).Type())
	r, m := recvNamed(sig.Results().At(0).Type())
	return p == "net/http" && n == "Request" && r == "net/http" && m == "Response"
}

// recvNamed is the package path and name of a (pointer to a) named type.
func recvNamed(t types.Type) (string, string) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return "", ""
	}
	return n.Obj().Pkg().Path(), n.Obj().Name()
}
