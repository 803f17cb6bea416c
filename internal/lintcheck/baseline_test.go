package lintcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// baselineFixture has two violations of F's length and complexity and a
// missing doc comment on G.
func baselineFixture() map[string][]byte {
	return map[string][]byte{"p/p.go": []byte("package p\n\n" + funcOf("F", 70, 16) + "func G() {}\n")}
}

func TestBaselineHidesListedFindingsAndReportsNewAndStaleOnes(t *testing.T) {
	fs, err := Check(module, baselineFixture())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBaseline("lint-baseline.txt", []byte(`# comment

p/p.go func-length F
p/p.go complexity F
p/gone.go doc Gone
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range b.Apply(fs) {
		got = append(got, f.String())
	}
	assertLines(t, got,
		"p/p.go:74: doc: exported func G has no doc comment",
		"lint-baseline.txt:5: stale-baseline: p/gone.go doc Gone no longer fires: remove the entry (scripts/lint.sh --update-baseline)")
}

func TestFormattedBaselineCoversEveryFindingOnce(t *testing.T) {
	fs, err := Check(module, baselineFixture())
	if err != nil {
		t.Fatal(err)
	}
	data := FormatBaseline(append(fs, fs...))
	if !strings.Contains(string(data), "scripts/lint.sh --update-baseline") {
		t.Errorf("the header does not say how to regenerate:\n%s", data)
	}
	b, err := ParseBaseline("b", data)
	if err != nil {
		t.Fatal(err)
	}
	if left := b.Apply(fs); len(left) != 0 {
		t.Errorf("left after its own baseline: %v", left)
	}
	if len(b.lines) != 3 {
		t.Errorf("baseline has %d entries, want 3:\n%s", len(b.lines), data)
	}
}

func TestBaselineRejectsMalformedAndRepeatedEntries(t *testing.T) {
	for _, src := range []string{"p/p.go doc\n", "p/p.go doc G\np/p.go doc G\n"} {
		if _, err := ParseBaseline("b", []byte(src)); err == nil {
			t.Errorf("ParseBaseline(%q) accepted it", src)
		}
	}
}

func TestLoadTreeSkipsWhatTheGoCommandSkips(t *testing.T) {
	root := t.TempDir()
	write := func(path, src string) {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	for _, p := range []string{"a.go", "pkg/b/b.go", "pkg/b/testdata/x.go", ".cache/y.go", "_old/z.go", "nested/go.mod", "nested/n.go", "pkg/b/README.md"} {
		write(p, "package x\n")
	}
	mod, files, err := LoadTree(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range files {
		got = append(got, p)
	}
	if strings.Join(slices.Sorted(slices.Values(got)), " ") != "a.go pkg/b/b.go" || mod != "example.com/m" {
		t.Errorf("LoadTree = %q, %v; want example.com/m, [a.go pkg/b/b.go]", mod, got)
	}
}
