// Package lintcheck is vmcp's own lint pass (run by cmd/vmcplint from
// scripts/lint.sh): the project's size rules on every Go file and, outside
// pkg/wire, the rule that wire mechanics live in pkg/wire, and the rule
// that pkg/upstream is the one sender of backend requests.
//
// Rules (each finding prints as "file:line: rule: message"):
//   - file-length: a Go file over MaxFileLines lines.
//   - func-length: a function or method over MaxFuncLines lines, counted
//     from its func keyword to its closing brace (the doc comment excluded).
//   - complexity: a function's cyclomatic complexity (github.com/fzipp/gocyclo:
//     1 + each if, for, range, non-default case and comm clause, && and ||,
//     function literals inside counted with it) over MaxComplexity.
//   - doc: an exported package-level func, type, var or const, or an exported
//     method of an exported type, without a doc comment (a parenthesised
//     group's doc comment covers its specs); _test.go files are exempt.
//   - wire-version, wire-envelope, wire-sse: see wire.go; they apply to
//     every file except _test.go files, files under pkg/wire/, under test/
//     (test programs and harnesses that play clients and backends and must
//     spell the wire out themselves) and this package (which names the
//     patterns it bans).
//   - global: an exported package-level var outside tests and test/
//     (process-wide mutable state); sentinel errors are exempt (globals.go).
//   - one-sender: see sender.go; it needs types, so it runs over the
//     packages go/packages loads (LoadTyped, CheckTree), not in Check.
//
// The size rules apply to test files too.
package lintcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// The project's limits (docs: "Files ≤ 400 lines, functions ≤ 60 lines,
// cyclomatic complexity ≤ 15").
const (
	MaxFileLines  = 400
	MaxFuncLines  = 60
	MaxComplexity = 15
)

// Finding is one rule violation. Symbol names what it is about, stable
// across edits that only move lines: "(*T).M" or "F" for a function or
// method, the declared name for a type, var or const, the enclosing
// declaration for a wire literal, "-" for a whole file. Baseline entries
// match File, Rule and Symbol.
type Finding struct {
	File   string // slash path relative to the module root
	Line   int
	Rule   string
	Symbol string
	Msg    string
}

// String is the finding's report line: "file:line: rule: message".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.Msg)
}

// Key is the finding's baseline key: file, rule and symbol.
func (f Finding) Key() Key { return Key{f.File, f.Rule, f.Symbol} }

// source is one parsed file with what the rules need to know about it.
type source struct {
	path   string // slash path relative to the module root
	dir    string // its directory, the package's key
	module string // the module's path, to resolve imports of its packages
	src    []byte
	file   *ast.File
	fset   *token.FileSet
	test   bool // a _test.go file
	wired  bool // subject to the wire rules
}

// Check parses files (slash paths relative to the root of module, the
// module's path from go.mod, to their contents) and returns every finding
// of every rule, sorted by file and line. A file that does not parse fails
// Check.
func Check(module string, files map[string][]byte) ([]Finding, error) {
	fset := token.NewFileSet()
	var srcs []*source
	for path, src := range files {
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("lintcheck: %w", err)
		}
		srcs = append(srcs, &source{
			path: path, dir: dirOf(path), module: module, src: src, file: f, fset: fset,
			test:  strings.HasSuffix(path, "_test.go"),
			wired: wireRulesApply(path),
		})
	}
	consts := versionConsts(srcs)
	var out []Finding
	for _, s := range srcs {
		out = append(out, sizeFindings(s)...)
		if !s.test {
			out = append(out, docFindings(s)...)
		}
		if !s.test && !strings.HasPrefix(s.path, "test/") {
			out = append(out, globalFindings(s)...)
		}
		if s.wired {
			out = append(out, wireFindings(s, consts)...)
		}
	}
	sortFindings(out)
	return out, nil
}

// wireRulesApply reports whether the wire rules check path (see the
// package doc for the exempt files).
func wireRulesApply(path string) bool {
	switch {
	case strings.HasSuffix(path, "_test.go"),
		strings.HasPrefix(path, "pkg/wire/"),
		strings.HasPrefix(path, "test/"),
		strings.HasPrefix(path, "internal/lintcheck/"):
		return false
	}
	return true
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return "."
}

func sortFindings(fs []Finding) {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Msg < b.Msg
	})
}

// funcSymbol is a function's symbol: "F", or "(T).M" / "(*T).M" for a
// method (gocyclo's spelling).
func funcSymbol(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	return "(" + star + typeName(t) + ")." + fn.Name.Name
}

// typeName is a receiver type's name without type parameters.
func typeName(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	}
	return "?"
}

func (s *source) line(p token.Pos) int { return s.fset.Position(p).Line }
