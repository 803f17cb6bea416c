package lintcheck

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// wireFindings checks the wire rules (wire.go) in every top-level
// declaration of s; a finding's symbol is the declaration's name.
func wireFindings(s *source, consts constSet) []Finding {
	w := &wireWalk{s: s, consts: consts}
	for _, d := range s.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			w.walk(d, funcSymbol(d))
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, sp := range d.Specs {
				w.walk(sp, specSymbol(sp))
			}
		}
	}
	return w.out
}

// specSymbol is a type's name or a value spec's first name.
func specSymbol(sp ast.Spec) string {
	switch sp := sp.(type) {
	case *ast.TypeSpec:
		return sp.Name.Name
	case *ast.ValueSpec:
		return sp.Names[0].Name
	}
	return "-"
}

// wireWalk collects the wire findings of one file.
type wireWalk struct {
	s      *source
	consts constSet
	sym    string
	skip   map[*ast.BasicLit]bool // struct tags and literals already judged
	out    []Finding
}

func (w *wireWalk) add(p token.Pos, rule, msg string) {
	w.out = append(w.out, Finding{w.s.path, w.s.line(p), rule, w.sym, msg})
}

func (w *wireWalk) walk(n ast.Node, sym string) {
	w.sym, w.skip = sym, map[*ast.BasicLit]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				w.skip[n.Tag] = true
			}
		case *ast.BinaryExpr:
			w.comparison(n)
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.BasicLit); ok && litIs(k, "jsonrpc") {
				w.add(k.Pos(), "wire-envelope", `JSON-RPC envelope key "jsonrpc" outside pkg/wire: build messages with pkg/wire`)
			}
		case *ast.BasicLit:
			if !w.skip[n] {
				w.literal(n)
			}
		}
		return true
	})
}

// comparison flags comparisons with version consts and jsonrpc == "2.0".
func (w *wireWalk) comparison(b *ast.BinaryExpr) {
	switch b.Op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
	default:
		return
	}
	for _, pair := range [2][2]ast.Expr{{b.X, b.Y}, {b.Y, b.X}} {
		if w.consts.refers(w.s, pair[0]) {
			w.add(b.OpPos, "wire-version", "comparison with protocol revision "+exprName(pair[0])+
				" outside pkg/wire: use wire.IsModern")
			return
		}
		if lit, ok := pair[0].(*ast.BasicLit); ok && litIs(lit, "2.0") && strings.EqualFold(exprName(pair[1]), "jsonrpc") {
			w.skip[lit] = true
			w.add(b.OpPos, "wire-envelope", `JSON-RPC version check jsonrpc == "2.0" outside pkg/wire: decode messages with pkg/wire`)
			return
		}
	}
}

// literal flags a string literal holding a revision, an envelope or SSE
// framing.
func (w *wireWalk) literal(lit *ast.BasicLit) {
	v, ok := stringValue(lit)
	if !ok {
		return
	}
	if isRevision(v) {
		w.add(lit.Pos(), "wire-version", "protocol revision literal "+strconv.Quote(v)+
			" outside pkg/wire: use wire's constants and wire.IsModern")
	}
	if envelopeRE.MatchString(v) {
		w.add(lit.Pos(), "wire-envelope", "JSON-RPC envelope literal outside pkg/wire: build messages with pkg/wire")
	}
	if f := sseFraming(v); f != "" {
		w.add(lit.Pos(), "wire-sse", "SSE framing "+strconv.Quote(f)+" outside pkg/wire: read and write SSE with pkg/wire")
	}
}

// sseFraming returns the SSE field or media type v holds, or "".
func sseFraming(v string) string {
	if strings.Contains(v, "text/event-stream") {
		return "text/event-stream"
	}
	for _, f := range sseFields {
		if strings.HasPrefix(v, f) || strings.Contains(v, "\n"+f) {
			return f
		}
	}
	return ""
}

func litIs(lit *ast.BasicLit, want string) bool {
	v, ok := stringValue(lit)
	return ok && v == want
}

// exprName is an identifier's name or a selector's last name, else "".
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
