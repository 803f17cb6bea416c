package lintcheck

import "testing"

// Exported package-level variables (config.DefaultRedact, auth.Algorithms,
// tracing.Propagator) were process-wide state any importer could change,
// and nothing flagged them.
func TestExportedMutableVarsWereUnflagged(t *testing.T) {
	src := `package p

import (
	"errors"
	"fmt"
)

// V is state.
var V = []string{"a"}

// ErrX is a sentinel.
var ErrX = errors.New("x")

// ErrY is a sentinel.
var ErrY = fmt.Errorf("y")

var hidden = 1

// C is a constant.
const C = 2
`
	assertLines(t, only("global", check(t, map[string]string{"p/p.go": src, "p/p_test.go": "package p\n\nvar T = 1\n"})),
		"p/p.go:9: global: exported package-level var V is process-wide mutable state: make it a const, a func or unexported")
}
