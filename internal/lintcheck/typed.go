package lintcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// CheckTree runs every rule over the module rooted at root: Check over
// its files (LoadTree) and the one-sender rule over its type-checked
// packages (LoadTyped), the findings sorted by file and line.
func CheckTree(root string) ([]Finding, error) {
	module, files, err := LoadTree(root)
	if err != nil {
		return nil, err
	}
	found, err := Check(module, files)
	if err != nil {
		return nil, err
	}
	typed, err := LoadTyped(root)
	if err != nil {
		return nil, err
	}
	found = append(found, SendFindings(typed)...)
	sortFindings(found)
	return found, nil
}

// Typed is one type-checked package for the rules that need types (the
// one-sender rule): its files, by slash path relative to the module root,
// and what go/types found in them.
type Typed struct {
	Fset  *token.FileSet
	Files map[string]*ast.File
	Info  *types.Info
}

// LoadTyped type-checks the module's packages under root (test files
// excluded: the one-sender rule does not apply to them) with go/packages,
// which builds the dependencies' export data with the go command. A
// package that does not type-check fails LoadTyped.
func LoadTyped(root string) ([]*Typed, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo,
		Dir: abs,
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, fmt.Errorf("lintcheck: loading packages: %w", err)
	}
	var out []*Typed
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("lintcheck: %s: %v", p.PkgPath, p.Errors[0])
		}
		t := &Typed{Fset: p.Fset, Files: map[string]*ast.File{}, Info: p.TypesInfo}
		for _, f := range p.Syntax {
			rel, err := filepath.Rel(abs, p.Fset.File(f.Pos()).Name())
			if err != nil || strings.HasPrefix(rel, "..") {
				continue // a cgo-generated file outside the tree
			}
			t.Files[filepath.ToSlash(rel)] = f
		}
		out = append(out, t)
	}
	return out, nil
}
