package lintcheck

import (
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// The wire rules keep wire mechanics in pkg/wire (issue 28). Outside the
// exempt files (see the package doc) they flag:
//   - wire-version: a string literal that is a protocol revision (any
//     date-shaped "YYYY-MM-DD" but Go's time layout "2006-01-02"; prose
//     that mentions a revision, as in an error message, is not), and a
//     comparison (==, !=, <, <=, >, >=) with a constant or package-level
//     variable that holds one (declared anywhere in the module, pkg/wire's
//     included, or an alias of one): use wire.IsModern and wire's constants.
//   - wire-envelope: a string literal holding `"jsonrpc":"2.0"` (any
//     spacing), a composite-literal key "jsonrpc", and a comparison of a
//     field or variable named jsonrpc (any case) with "2.0".
//   - wire-sse: a string literal that starts an SSE field ("data:",
//     "event:", "id:", "retry:", at its start or after a newline) or names
//     the media type text/event-stream.
var (
	revisionRE = regexp.MustCompile(`^20[0-9]{2}-[01][0-9]-[0-3][0-9]$`)
	envelopeRE = regexp.MustCompile(`"jsonrpc"\s*:\s*"2\.0"`)
	sseFields  = []string{"data:", "event:", "id:", "retry:"}
)

// goTimeLayout is the reference date of Go's time layouts, not a revision.
const goTimeLayout = "2006-01-02"

// constSet holds, per package directory, the names of package-level
// consts and vars whose value is a protocol revision.
type constSet map[string]map[string]bool

// valueDecl is one package-level const or var name with its value.
type valueDecl struct {
	s     *source
	name  string
	value ast.Expr
}

// versionConsts finds every package-level const and var that holds a
// protocol revision, directly or through other such names.
func versionConsts(srcs []*source) constSet {
	decls := valueDecls(srcs)
	set := constSet{}
	for changed := true; changed; {
		changed = false
		for _, d := range decls {
			if set[d.s.dir][d.name] {
				continue
			}
			if lit, ok := d.value.(*ast.BasicLit); (ok && isVersionLit(lit)) || set.refers(d.s, d.value) {
				if set[d.s.dir] == nil {
					set[d.s.dir] = map[string]bool{}
				}
				set[d.s.dir][d.name] = true
				changed = true
			}
		}
	}
	return set
}

// valueDecls lists the package-level consts and vars declared with a value.
func valueDecls(srcs []*source) []valueDecl {
	var decls []valueDecl
	for _, s := range srcs {
		for _, d := range s.file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						decls = append(decls, valueDecl{s, n.Name, vs.Values[i]})
					}
				}
			}
		}
	}
	return decls
}

// refers reports whether e, in s, names a version const: an identifier of
// s's package or pkg.Name of a package of this module.
func (set constSet) refers(s *source, e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return set[s.dir][e.Name]
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			return false
		}
		dir, ok := s.importDir(x.Name)
		return ok && set[dir][e.Sel.Name]
	}
	return false
}

// importDir resolves a package name used in s to the directory of a
// package of this module (the import's name, else its last path element).
func (s *source) importDir(name string) (string, bool) {
	for _, im := range s.file.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		local := path[strings.LastIndexByte(path, '/')+1:]
		if im.Name != nil {
			local = im.Name.Name
		}
		if local != name {
			continue
		}
		if s.module != "" && strings.HasPrefix(path, s.module+"/") {
			return strings.TrimPrefix(path, s.module+"/"), true
		}
		return "", false
	}
	return "", false
}

func isVersionLit(lit *ast.BasicLit) bool {
	v, ok := stringValue(lit)
	return ok && isRevision(v)
}

// isRevision reports whether v is a protocol revision: a date.
func isRevision(v string) bool { return v != goTimeLayout && revisionRE.MatchString(v) }

func stringValue(lit *ast.BasicLit) (string, bool) {
	if lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}
