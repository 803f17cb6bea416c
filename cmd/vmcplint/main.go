// Command vmcplint runs vmcp's own lint rules (internal/lintcheck: file,
// function and complexity limits, doc comments, wire mechanics only in
// pkg/wire, backend sends only in pkg/upstream) over the module in the current directory and prints each
// finding as "file:line: rule: message" on stdout. Findings the baseline
// lists are not printed; baseline entries that no longer fire are. Exit
// status: 0 clean, 1 findings, 2 the check could not run.
//
//	go run ./cmd/vmcplint            # check (scripts/lint.sh runs this)
//	go run ./cmd/vmcplint -update    # rewrite the baseline from the tree
//	go run ./cmd/vmcplint -all       # every finding, baseline ignored
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vmcp/vmcp/internal/lintcheck"
)

func main() {
	root := flag.String("root", ".", "the module's root directory")
	base := flag.String("baseline", "scripts/lint-baseline.txt", "the baseline file, relative to -root")
	update := flag.Bool("update", false, "rewrite the baseline to list every current finding")
	all := flag.Bool("all", false, "print every finding, ignoring the baseline")
	flag.Parse()
	n, err := run(*root, *base, *update, *all)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmcplint:", err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "vmcplint: %d findings: fix them (rules: internal/lintcheck); only to accept a violation on purpose, regenerate %s (scripts/lint.sh --update-baseline)\n", n, *base)
		os.Exit(1)
	}
}

// run checks the tree and prints what fails it; it returns how many.
func run(root, base string, update, all bool) (int, error) {
	found, err := lintcheck.CheckTree(root)
	if err != nil {
		return 0, err
	}
	path := filepath.Join(root, base)
	if update {
		if err := os.WriteFile(path, lintcheck.FormatBaseline(found), 0o644); err != nil {
			return 0, err
		}
		fmt.Fprintf(os.Stderr, "vmcplint: wrote %s (%d findings)\n", path, len(found))
		return 0, nil
	}
	if !all {
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		b, err := lintcheck.ParseBaseline(filepath.ToSlash(base), data)
		if err != nil {
			return 0, err
		}
		found = b.Apply(found)
	}
	for _, f := range found {
		fmt.Println(f)
	}
	return len(found), nil
}
