package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// maxTokens bounds the tokens taken from one text (a description or a query),
// so a huge description or query costs a bounded amount of work.
const maxTokens = 2048

// words splits s into lower-case words (see eachWord).
func words(s string) []string {
	var out []string
	eachWord(s, func(w string) {
		if len(out) < maxTokens {
			out = append(out, strings.ToLower(w))
		}
	})
	return out
}

// eachWord calls fn with each word of s, as it is written: s split at every
// rune that is not a letter or a digit, between a lower-case letter and an
// upper-case one ("listFiles"), before the last upper-case letter of a run
// followed by a lower-case one ("HTMLParser" → "HTML", "Parser"), and
// between letters and digits; a run of letters and digits so split
// ("GitHub", "InfoQ", "mp3") is a word whole too, after its pieces, to
// meet the same name written as one word ("github"). A run of Han,
// Hiragana, Katakana or Hangul characters (CJK text has no spaces) gives
// each pair of them in a row, as CJK analyzers do ("火车票" gives 火车 and
// 车票, so a query's words match as words, not as any of their characters
// apart); a lone one is a word.
func eachWord(s string, fn func(string)) {
	run, last, pieces := 0, -1, 0 // the pieces so far of one run: s[run:last]
	whole := func() {
		if pieces > 1 {
			fn(s[run:last])
		}
		pieces = 0
	}
	eachPiece(s, func(i, j int) {
		if r, _ := utf8.DecodeRuneInString(s[i:]); classOf(r) == classIdeograph {
			whole()
			fn(s[i:j])
			last = -1
			return
		}
		if i != last { // not the run's next piece
			whole()
			run = i
		}
		fn(s[i:j])
		last = j
		pieces++
	})
	whole()
}

// eachPiece calls fn with the bounds of each piece of s, as eachWord
// splits it (without the runs whole).
func eachPiece(s string, fn func(i, j int)) {
	start, ideo := -1, -1 // ideo: where the ideograph just before began
	pair := false         // the run of ideographs has given a pair
	var prev rune
	for i, r := range s {
		cls := classOf(r)
		if cls != classIdeograph && ideo >= 0 {
			if !pair { // an ideograph alone is a word
				fn(ideo, i)
			}
			ideo, pair = -1, false
		}
		switch {
		case cls == classOther:
			if start >= 0 {
				fn(start, i)
			}
			start = -1
		case cls == classIdeograph:
			if start >= 0 {
				fn(start, i)
			}
			if ideo >= 0 {
				fn(ideo, i+utf8.RuneLen(r))
				pair = true
			}
			start, ideo = -1, i
		case start < 0:
			start = i
		case boundary(prev, r, s[i+utf8.RuneLen(r):]):
			fn(start, i)
			start = i
		}
		prev = r
	}
	if start >= 0 {
		fn(start, len(s))
	}
	if ideo >= 0 && !pair {
		fn(ideo, len(s))
	}
}

const (
	classOther = iota
	classWord
	classIdeograph
)

// classOf sorts a rune: part of a word, an ideograph (a word alone), or a
// separator; ASCII without table look-ups.
func classOf(r rune) int {
	switch {
	case r < 0x80:
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return classWord
		}
		return classOther
	case r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		return classIdeograph
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		return classWord
	}
	return classOther
}

// boundary reports whether a new word starts at r, which follows prev inside
// a run of letters and digits; rest is the text after r.
func boundary(prev, r rune, rest string) bool {
	if prev < 0x80 && r < 0x80 {
		return asciiBoundary(byte(prev), byte(r), rest)
	}
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// asciiBoundary is boundary for two ASCII letters or digits.
func asciiBoundary(prev, r byte, rest string) bool {
	pd, rd := prev <= '9', r <= '9'
	switch {
	case pd != rd:
		return true
	case prev >= 'a' && r <= 'Z' && !rd:
		return true
	case prev <= 'Z' && !pd && r <= 'Z' && !rd:
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// dropped reports whether w carries no meaning for search: an English stop
// word or a single ASCII letter.
func dropped(w string) bool {
	return english.IsStopWord(w) || len(w) == 1 && w[0] >= 'a' && w[0] <= 'z'
}

// stem returns w's Snowball English stem; words that are not plain ASCII
// letters (digits, other scripts) are kept as they are.
func stem(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	return english.Stem(w, false)
}
