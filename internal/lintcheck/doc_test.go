package lintcheck

import "testing"

func TestDocFiresOnUndocumentedExportedNames(t *testing.T) {
	src := `package p

func F() {}

type T struct{}

func (T) M() {}

func (*T) N() {}

var V = 1

const C = 2

const (
	A = iota
	B
)

type (
	G1 int
)
`
	assertLines(t, only("doc", check(t, map[string]string{"p/p.go": src})),
		"p/p.go:3: doc: exported func F has no doc comment",
		"p/p.go:5: doc: exported type T has no doc comment",
		"p/p.go:7: doc: exported method (T).M has no doc comment",
		"p/p.go:9: doc: exported method (*T).N has no doc comment",
		"p/p.go:11: doc: exported var V has no doc comment",
		"p/p.go:13: doc: exported const C has no doc comment",
		"p/p.go:16: doc: exported const A has no doc comment",
		"p/p.go:17: doc: exported const B has no doc comment",
		"p/p.go:21: doc: exported type G1 has no doc comment")
}

func TestDocQuietOnDocumentedUnexportedAndTestNames(t *testing.T) {
	src := `package p

// F is documented.
func F() {}

func f() {}

type t struct{}

// M is a method of an unexported type: no doc needed.
func (t) M() {}

func (t) N() {}

// Limits covers the group.
const (
	A = 1
	B = 2
)

var (
	// V has its own.
	V = 1
	w = 2
)

// G is a generic type.
type G[K comparable] struct{}

func (G[K]) m() {}

// Get is documented.
func (*G[K]) Get() {}
`
	got := check(t, map[string]string{
		"p/p.go":      src,
		"p/p_test.go": "package p\n\nfunc Helper() {}\n\ntype Fixture struct{}\n",
	})
	assertLines(t, only("doc", got))
}
