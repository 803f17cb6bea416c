package lintcheck

import (
	"go/ast"
	"go/token"
)

// docFindings checks that every exported package-level name has a doc
// comment: funcs, methods of exported types, types, vars and consts. In a
// parenthesised group the group's doc comment covers its specs.
func docFindings(s *source) []Finding {
	var out []Finding
	miss := func(p token.Pos, kind, sym string) {
		out = append(out, Finding{s.path, s.line(p), "doc", sym,
			"exported " + kind + " " + sym + " has no doc comment"})
	}
	for _, d := range s.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc == nil && exportedFunc(d) {
				kind := "func"
				if d.Recv != nil {
					kind = "method"
				}
				miss(d.Pos(), kind, funcSymbol(d))
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				for _, name := range undocumented(d, sp) {
					miss(name.Pos(), d.Tok.String(), name.Name)
				}
			}
		}
	}
	return out
}

// exportedFunc reports whether fn is an exported func, or an exported
// method of an exported type.
func exportedFunc(fn *ast.FuncDecl) bool {
	if !fn.Name.IsExported() {
		return false
	}
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return true
	}
	t := fn.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	return ast.IsExported(typeName(t))
}

// undocumented returns sp's exported names when neither sp nor its
// declaration has a doc comment.
func undocumented(d *ast.GenDecl, sp ast.Spec) []*ast.Ident {
	if d.Doc != nil {
		return nil
	}
	var names []*ast.Ident
	switch sp := sp.(type) {
	case *ast.TypeSpec:
		if sp.Doc == nil {
			names = append(names, sp.Name)
		}
	case *ast.ValueSpec:
		if sp.Doc == nil {
			names = sp.Names
		}
	}
	var out []*ast.Ident
	for _, n := range names {
		if n.IsExported() {
			out = append(out, n)
		}
	}
	return out
}
