package lintcheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// LoadTree reads the module rooted at root: its path (from go.mod) and
// every .go file under root, keyed by slash path relative to root. Like
// the go command it skips directories named testdata or starting with "."
// or "_", and nested modules.
func LoadTree(root string) (module string, files map[string][]byte, err error) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", nil, err
	}
	module = modfile.ModulePath(gomod)
	if module == "" {
		return "", nil, fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
	}
	files = map[string][]byte{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = src
		return err
	})
	return module, files, err
}

// skipDir reports whether the go command would skip the directory.
func skipDir(path, name string) bool {
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}
