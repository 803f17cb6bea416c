package lintcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Key is a baseline entry: a finding's file, rule and symbol (no line
// numbers, so edits elsewhere in the file do not disturb it).
type Key struct{ File, Rule, Symbol string }

// String is the entry as the baseline file spells it: "file rule symbol".
func (k Key) String() string { return k.File + " " + k.Rule + " " + k.Symbol }

// Baseline is the ratchet of known violations: a finding whose key it
// lists is not reported; an entry no finding matches is (it must go).
type Baseline struct {
	path  string
	lines map[Key]int // entry to its line in the file
}

// ParseBaseline reads a baseline file (path names it in findings): one
// "file rule symbol" entry a line, blank lines and # comments ignored.
// A malformed or repeated entry fails.
func ParseBaseline(path string, data []byte) (*Baseline, error) {
	b := &Baseline{path: path, lines: map[Key]int{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"file rule symbol\", got %q", path, n, line)
		}
		k := Key{f[0], f[1], f[2]}
		if prev, dup := b.lines[k]; dup {
			return nil, fmt.Errorf("%s:%d: entry repeats line %d", path, n, prev)
		}
		b.lines[k] = n
	}
	return b, sc.Err()
}

// Apply returns the findings b does not list, then a "stale-baseline"
// finding (at the entry's line of the baseline file) for each entry that
// matches no finding, so the baseline only ever shrinks by hand.
func (b *Baseline) Apply(fs []Finding) []Finding {
	used := map[Key]bool{}
	var out []Finding
	for _, f := range fs {
		if _, ok := b.lines[f.Key()]; ok {
			used[f.Key()] = true
			continue
		}
		out = append(out, f)
	}
	var stale []Finding
	for k, n := range b.lines {
		if !used[k] {
			stale = append(stale, Finding{b.path, n, "stale-baseline", "-",
				k.String() + " no longer fires: remove the entry (scripts/lint.sh --update-baseline)"})
		}
	}
	sortFindings(stale)
	return append(out, stale...)
}

// baselineHeader opens every generated baseline file.
const baselineHeader = `# vmcplint baseline: known violations of the size, doc, wire and one-sender rules
# (internal/lintcheck), one "file rule symbol" entry a line. A listed
# violation is not reported; a new one fails lint, and so does an entry
# that no longer fires. Regenerate with: scripts/lint.sh --update-baseline
`

// FormatBaseline renders a baseline listing every finding's key once,
// sorted, after a header saying how to regenerate it.
func FormatBaseline(fs []Finding) []byte {
	seen := map[Key]bool{}
	var keys []string
	for _, f := range fs {
		if !seen[f.Key()] {
			seen[f.Key()] = true
			keys = append(keys, f.Key().String())
		}
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteString(baselineHeader)
	for _, k := range keys {
		buf.WriteString(k + "\n")
	}
	return buf.Bytes()
}
