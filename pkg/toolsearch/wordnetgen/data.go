package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kljensen/snowball/english"
)

// synset is one data line's words and its hypernyms' offsets.
type synset struct {
	words []string
	hyper []int64
	deriv []pointer // derivationally related forms ("+")
}

// pointer is a lexical pointer: its target synset's offset and part of
// speech, and the source and target word numbers (1-based; 0: all).
type pointer struct {
	off      int64
	pos      byte
	src, tgt int
}

// readSynset parses the data line at off of a data file's content.
func readSynset(data []byte, off int64) (synset, error) {
	var s synset
	if off < 0 || off >= int64(len(data)) {
		return s, fmt.Errorf("offset %d out of range", off)
	}
	rest := data[off:]
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	line, _, _ := strings.Cut(string(rest), " | ")
	fs := strings.Fields(line)
	if len(fs) < 4 {
		return s, fmt.Errorf("short line at %d", off)
	}
	n, err := strconv.ParseInt(fs[3], 16, 32)
	if err != nil || len(fs) < 5+2*int(n) {
		return s, fmt.Errorf("bad word count at %d", off)
	}
	for i := range int(n) {
		s.words = append(s.words, strings.ToLower(fs[4+2*i]))
	}
	ptrs := fs[4+2*int(n):]
	p, _ := strconv.Atoi(ptrs[0])
	for i := range p {
		if 1+4*i+3 >= len(ptrs) {
			break
		}
		s.addPointer(ptrs[1+4*i : 1+4*i+4])
	}
	return s, nil
}

// addPointer keeps a pointer (symbol, offset, part of speech,
// source/target) if it is a hypernym ("@") or a derivation ("+").
func (s *synset) addPointer(f []string) {
	switch f[0] {
	case "@":
		if h, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			s.hyper = append(s.hyper, h)
		}
	case "+":
		off, err1 := strconv.ParseInt(f[1], 10, 64)
		st, err2 := strconv.ParseUint(f[3], 16, 16)
		if err1 == nil && err2 == nil && len(f[2]) == 1 {
			s.deriv = append(s.deriv, pointer{off: off, pos: f[2][0], src: int(st >> 8), tgt: int(st & 0xff)})
		}
	}
}

// expand adds each word of firsts its first sense's other common words,
// and with hyper its hypernyms' words.
func expand(path string, firsts map[string]int64, common map[string]bool, hyper bool, table map[string]*entry) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for word, off := range firsts {
		s, err := readSynset(data, off)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		e := table[word]
		if e == nil {
			e = &entry{syn: map[string]bool{}, hyp: map[string]bool{}, der: map[string]bool{}}
			table[word] = e
		}
		addWords(e.syn, s.words, word, common)
		for _, h := range s.hyper {
			if !hyper {
				break
			}
			hs, err := readSynset(data, h)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			addWords(e.hyp, hs.words, word, common)
		}
	}
	return nil
}

// addWords adds to set the common single words of ws other than self.
func addWords(set map[string]bool, ws []string, self string, common map[string]bool) {
	for _, w := range ws {
		if w != self && isWord(w) && common[w] {
			set[w] = true
		}
	}
}

// write writes the table's entries as Snowball stems (toolsearch's terms:
// the words are plain lower-case ASCII), sorted, one a line; a stem's
// lines are merged and an expansion to the stem itself dropped.
func write(w io.Writer, table map[string]*entry) error {
	stems := map[string]*entry{}
	for word, e := range table {
		s := english.Stem(word, false)
		m := stems[s]
		if m == nil {
			m = &entry{syn: map[string]bool{}, hyp: map[string]bool{}, der: map[string]bool{}}
			stems[s] = m
		}
		for x := range e.syn {
			m.syn[english.Stem(x, false)] = true
		}
		for x := range e.hyp {
			m.hyp[english.Stem(x, false)] = true
		}
		for x := range e.der {
			m.der[english.Stem(x, false)] = true
		}
	}
	keys := make([]string, 0, len(stems))
	for s, e := range stems {
		delete(e.syn, s)
		delete(e.hyp, s)
		delete(e.der, s)
		for x := range e.syn {
			delete(e.hyp, x)
			delete(e.der, x)
		}
		for x := range e.hyp {
			delete(e.der, x)
		}
		if len(e.syn)+len(e.hyp)+len(e.der) > 0 {
			keys = append(keys, s)
		}
	}
	sort.Strings(keys)
	for _, s := range keys {
		if _, err := fmt.Fprintf(w, "%s %s %s %s\n", s, list(stems[s].syn), list(stems[s].hyp), list(stems[s].der)); err != nil {
			return err
		}
	}
	return nil
}

// list is set's words sorted and comma-separated, or "-".
func list(set map[string]bool) string {
	if len(set) == 0 {
		return "-"
	}
	ws := make([]string, 0, len(set))
	for w := range set {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	return strings.Join(ws, ",")
}

// derive adds each common noun and verb the derivationally related forms
// (WordNet's "+" pointers) of its own word in its first sense that are
// common nouns or verbs ("creation" → "create", "analyze" → "analysis").
func derive(dict string, firsts map[string]map[string]int64, common map[string]bool, table map[string]*entry) error {
	data := map[byte][]byte{}
	for pos, name := range map[byte]string{'n': "noun", 'v': "verb"} {
		b, err := os.ReadFile(filepath.Join(dict, "data."+name))
		if err != nil {
			return err
		}
		data[pos] = b
	}
	for pos, name := range map[byte]string{'n': "noun", 'v': "verb"} {
		for word, off := range firsts[name] {
			s, err := readSynset(data[pos], off)
			if err != nil {
				return err
			}
			self := slices.Index(s.words, word) + 1
			for _, p := range s.deriv {
				if p.src != 0 && p.src != self || data[p.pos] == nil {
					continue
				}
				t, err := readSynset(data[p.pos], p.off)
				if err != nil {
					return err
				}
				if p.tgt >= 1 && p.tgt <= len(t.words) {
					addWords(table[word].der, t.words[p.tgt-1:p.tgt], word, common)
				}
			}
		}
	}
	return nil
}
