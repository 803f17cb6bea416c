package lintcheck

import (
	"go/ast"
	"go/token"
	"strings"
)

// globalFindings flags exported package-level variables outside tests:
// state every importer may change (issue 28: no process-wide mutable
// state). Sentinel errors (errors.New, fmt.Errorf) are exempt; a constant,
// a function returning a fresh value, or an unexported name does instead.
func globalFindings(s *source) []Finding {
	var out []Finding
	for _, d := range s.file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			for i, name := range v.Names {
				if !name.IsExported() || (i < len(v.Values) && sentinel(v.Values[i])) {
					continue
				}
				out = append(out, Finding{s.path, s.line(name.Pos()), "global", name.Name,
					"exported package-level var " + name.Name + " is process-wide mutable state: make it a const, a func or unexported"})
			}
		}
	}
	return out
}

// sentinel reports whether e builds an error value (errors.New, fmt.Errorf).
func sentinel(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	name := pkg.Name + "." + sel.Sel.Name
	return name == "errors.New" || name == "fmt.Errorf" || strings.HasSuffix(name, ".NewError")
}
