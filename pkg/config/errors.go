package config

import (
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration file: the 1-based line it
// concerns (0 if unknown), the dotted key path (e.g. "backends[1].url"), and
// a message. File is the file name given to Parse; it may be empty.
// Severity says what it does to the file (the zero value: an error).
type Problem struct {
	Line     int
	Key      string
	Msg      string
	File     string
	Severity Severity
}

// Severity is what a Problem does to its file: SeverityError refuses it;
// SeverityWarning lets vmcp serve start (it logs the warning) but fails
// vmcp validate; SeverityNote is advice that fails nothing.
type Severity uint8

// Severities, from the one that refuses a file to advice.
const (
	SeverityError Severity = iota
	SeverityWarning
	SeverityNote
)

// String names the severity: "error", "warning" or "note".
func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityNote:
		return "note"
	}
	return "error"
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

// Labelled is String with a warning's or note's severity before the
// message, `demo.yaml:8: backends[1].command: warning: command "x" not
// found on PATH`; an error's is String.
func (p Problem) Labelled() string {
	if p.Severity == SeverityError {
		return p.String()
	}
	p.Msg = p.Severity.String() + ": " + p.Msg
	return p.String()
}

// ValidationError is every problem found in one configuration file in one
// pass: Problems, the errors that refuse it, and Warnings, the warnings and
// notes found beside them (Severity tells which), each sorted by line.
// Parse returns it (as *ValidationError) for any bad input.
type ValidationError struct {
	File     string
	Problems []Problem
	Warnings []Problem
}

// All returns the errors, warnings and notes merged by line (on one line,
// errors first), each list keeping its order.
func (e *ValidationError) All() []Problem {
	all := make([]Problem, 0, len(e.Problems)+len(e.Warnings))
	ps, ws := e.Problems, e.Warnings
	for len(ps) > 0 || len(ws) > 0 {
		if len(ws) == 0 || len(ps) > 0 && ps[0].Line <= ws[0].Line {
			all, ps = append(all, ps[0]), ps[1:]
		} else {
			all, ws = append(all, ws[0]), ws[1:]
		}
	}
	return all
}

// Error lists every problem one per line (Labelled), sorted by line.
func (e *ValidationError) Error() string {
	all := e.All()
	lines := make([]string, len(all))
	for i, p := range all {
		lines[i] = p.Labelled()
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

// err returns the collected problems as a *ValidationError, or nil; others
// (warnings and notes found in the same pass) go with them.
func (ps *problems) err(others ...Problem) error {
	if len(ps.list) == 0 {
		return nil
	}
	sortProblems(ps.list)
	sortProblems(others)
	return &ValidationError{File: ps.file, Problems: ps.list, Warnings: others}
}

// warn returns a problem of severity s at key (line from the index), and
// false under a key already reported as malformed: what was decoded there
// means nothing.
func (ps *problems) warn(s Severity, key, msg string) (Problem, bool) {
	if ps.ix.isBad(key) {
		return Problem{}, false
	}
	return Problem{File: ps.file, Line: ps.ix.line(key), Key: ps.ix.display(key), Msg: msg, Severity: s}, true
}

// sortProblems sorts list by line, then severity (errors first), keeping
// the order of problems otherwise.
func sortProblems(list []Problem) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Line != list[j].Line {
			return list[i].Line < list[j].Line
		}
		return list[i].Severity < list[j].Severity
	})
}
