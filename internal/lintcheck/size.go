package lintcheck

import (
	"bytes"
	"fmt"
	"go/ast"

	"github.com/fzipp/gocyclo"
)

// sizeFindings checks file-length, func-length and complexity.
func sizeFindings(s *source) []Finding {
	var out []Finding
	if n := lineCount(s.src); n > MaxFileLines {
		out = append(out, Finding{s.path, MaxFileLines + 1, "file-length", "-",
			fmt.Sprintf("%d lines, over %d: split the file by concept", n, MaxFileLines)})
	}
	for _, d := range s.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		sym := funcSymbol(fn)
		start := s.line(fn.Pos())
		if n := s.line(fn.End()) - start + 1; n > MaxFuncLines {
			out = append(out, Finding{s.path, start, "func-length", sym,
				fmt.Sprintf("%s is %d lines, over %d", sym, n, MaxFuncLines)})
		}
		if c := gocyclo.Complexity(fn); c > MaxComplexity {
			out = append(out, Finding{s.path, start, "complexity", sym,
				fmt.Sprintf("%s has cyclomatic complexity %d, over %d", sym, c, MaxComplexity)})
		}
	}
	return out
}

// lineCount counts lines as wc -l does, plus a last line without a newline.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte{'\n'})
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}
