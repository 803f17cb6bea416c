package lintcheck

import (
	"fmt"
	"strings"
	"testing"
)

// module is the fixtures' module path.
const module = "example.com/m"

// check runs Check over fixture sources and returns the report lines.
func check(t *testing.T, files map[string]string) []string {
	t.Helper()
	in := map[string][]byte{}
	for p, src := range files {
		in[p] = []byte(src)
	}
	fs, err := Check(module, in)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// only keeps the lines of one rule.
func only(rule string, lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, ": "+rule+": ") {
			out = append(out, l)
		}
	}
	return out
}

// assertLines fails unless got holds exactly want (in order).
func assertLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// funcOf is a documented func F whose declaration spans lines lines
// (lines >= 2) and whose complexity is 1 + ifs.
func funcOf(name string, lines, ifs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s is a fixture.\nfunc %s(x int) {\n", name, name)
	for i := 0; i < ifs; i++ {
		fmt.Fprintf(&b, "\tif x == %d {\n\t\tx++\n\t}\n", i)
	}
	for i := 3 * ifs; i < lines-2; i++ {
		b.WriteString("\tx++\n")
	}
	b.WriteString("}\n")
	return b.String()
}
