package lintcheck

import (
	"strings"
	"testing"
)

func TestFileLengthFiresOverFourHundredLines(t *testing.T) {
	body := func(n int) string { return "package p\n" + strings.Repeat("\n", n-1) }
	got := check(t, map[string]string{
		"p/ok.go":       body(400),
		"p/big.go":      body(401),
		"p/big_test.go": body(450), // the size rules hold for test files too
	})
	assertLines(t, only("file-length", got),
		"p/big.go:401: file-length: 401 lines, over 400: split the file by concept",
		"p/big_test.go:401: file-length: 450 lines, over 400: split the file by concept")
}

func TestFuncLengthCountsFromFuncToClosingBrace(t *testing.T) {
	got := check(t, map[string]string{
		"p/p.go": "package p\n\n" + funcOf("Sixty", 60, 0) + funcOf("SixtyOne", 61, 0) +
			"// T is a fixture.\ntype T struct{}\n\n// M is a fixture.\nfunc (*T) M() {\n" + strings.Repeat("\tprintln()\n", 60) + "}\n",
	})
	assertLines(t, only("func-length", got),
		"p/p.go:65: func-length: SixtyOne is 61 lines, over 60",
		"p/p.go:130: func-length: (*T).M is 62 lines, over 60")
}

func TestComplexityFiresOverFifteen(t *testing.T) {
	got := check(t, map[string]string{
		"p/p.go": "package p\n\n" + funcOf("Fifteen", 45, 14) + funcOf("Sixteen", 50, 15),
	})
	assertLines(t, only("complexity", got),
		"p/p.go:50: complexity: Sixteen has cyclomatic complexity 16, over 15")
}

func TestComplexityCountsBooleanOperatorsAndCases(t *testing.T) {
	src := `package p

// F is a fixture.
func F(a, b bool, n int) int {
	if a && b || a && !b || b && !a || !a && !b { // 1 if + 7 operators
		return 0
	}
	switch n {
	case 1, 2:
	case 3:
	case 4:
	case 5:
	case 6:
	case 7:
	case 8:
	default:
	}
	return n
}
`
	assertLines(t, only("complexity", check(t, map[string]string{"p/p.go": src})),
		"p/p.go:4: complexity: F has cyclomatic complexity 16, over 15")
}
