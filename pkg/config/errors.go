package config

import (
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration file: the 1-based line it
// concerns (0 if unknown), the dotted key path (e.g. "backends[1].url"), and
// a message. File is the file name given to Parse; it may be empty.
type Problem struct {
	Line int
	Key  string
	Msg  string
	File string
}

// String formats p as "file:line: key: msg", e.g.
// `demo.yaml:12: backends[1].name: duplicate backend name "alpha"`.
// Empty parts are left out.
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.File != "" && p.Line > 0:
		b.WriteString(p.File + ":" + strconv.Itoa(p.Line) + ": ")
	case p.File != "":
		b.WriteString(p.File + ": ")
	case p.Line > 0:
		b.WriteString("line " + strconv.Itoa(p.Line) + ": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError is every problem found in one configuration file, sorted
// by line. Parse returns it (as *ValidationError) for any bad input.
type ValidationError struct {
	File     string
	Problems []Problem
}

// Error lists the problems one per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	if len(lines) == 0 {
		return e.File + ": invalid configuration"
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems for one file, taking lines from an index and
// suppressing follow-on problems under keys already reported as malformed.
type problems struct {
	file string
	ix   *index
	list []Problem
}

// at records a problem at an explicit line.
func (ps *problems) at(line int, key, msg string) {
	ps.list = append(ps.list, Problem{Line: line, Key: key, Msg: msg, File: ps.file})
}

// add records a problem at key, taking the line from the index: the key's own
// line, or its nearest present parent's when the key is missing. Problems
// under a key the schema walk already found malformed are dropped.
func (ps *problems) add(key, msg string) {
	if ps.ix.isBad(key) {
		return
	}
	ps.at(ps.ix.line(key), ps.ix.display(key), msg)
}

// err returns the collected problems as a *ValidationError, or nil.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	sortProblems(ps.list)
	return &ValidationError{File: ps.file, Problems: ps.list}
}

// sortProblems sorts list by line, keeping the order of problems on one line.
func sortProblems(list []Problem) {
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
}
