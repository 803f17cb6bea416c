package toolsearch

import "strings"

// arithmeticStep is the step an arithmetic request implies ("what is 17%
// of 2340", "3.5 * 12"): its words name no tool, so without it such a
// request finds nothing.
const arithmeticStep = "calculate expression"

// arithmeticWords are operations written in words between numbers.
var arithmeticWords = []string{"percent", "divided by", "times", "plus", "minus", "square root", "sqrt", "squared"}

// arithmetic reports whether the lower-cased q holds arithmetic on
// numbers: a percentage ("17%"), two numbers joined by + * ^ × ÷ ("3 * 4"),
// or an operation in words next to a number. Dates and ranges ("05-01",
// "1/2") are not, so '-' and '/' count only with a space on each side.
func arithmetic(q string) bool {
	prev := byte(0) // the last byte that is not a space
	for i := 0; i < len(q); i++ {
		if isDigit(prev) && operatorAt(q, i) {
			return true
		}
		if q[i] != ' ' {
			prev = q[i]
		}
	}
	return wordOperation(q)
}

// operatorAt reports whether an operation on the number before it starts
// at q[i]: '%', or + * ^ × ÷ before a number, or '-' or '/' spaced on both
// sides before one ("1234 - 89", not "05-01" nor "1/2").
func operatorAt(q string, i int) bool {
	switch c := q[i]; {
	case c == '%':
		return true
	case strings.IndexByte("+*^", c) >= 0:
		return digitNext(q[i+1:])
	case c == '-' || c == '/':
		return spaced(q, i) && digitNext(q[i+1:])
	case strings.HasPrefix(q[i:], "×") || strings.HasPrefix(q[i:], "÷"):
		return digitNext(q[i+len("×"):])
	}
	return false
}

// wordOperation reports whether an operation of arithmeticWords has a
// number right before or after it.
func wordOperation(q string) bool {
	for _, w := range arithmeticWords {
		for i := strings.Index(q, w); i >= 0; {
			before := strings.TrimRight(q[:i], " ")
			if before != "" && isDigit(before[len(before)-1]) || digitNext(q[i+len(w):]) {
				return true
			}
			next := strings.Index(q[i+len(w):], w)
			if next < 0 {
				break
			}
			i += len(w) + next
		}
	}
	return false
}

// operands returns q with its numbers and operation words blanked when it
// asks for arithmetic (digits would match tools' names: "9to5mac"; "times"
// a clock's), q itself otherwise.
func operands(q string) string {
	lower := strings.ToLower(q)
	if !arithmetic(lower) {
		return q
	}
	b := []byte(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return ' '
		}
		return r
	}, q))
	for _, w := range arithmeticWords {
		for i := strings.Index(lower, w); i >= 0 && len(b) == len(lower); {
			copy(b[i:i+len(w)], strings.Repeat(" ", len(w)))
			next := strings.Index(lower[i+len(w):], w)
			if next < 0 {
				break
			}
			i += len(w) + next
		}
	}
	return string(b)
}

// spaced reports whether q[i] has a space on each side.
func spaced(q string, i int) bool {
	return i > 0 && q[i-1] == ' ' && i+1 < len(q) && q[i+1] == ' '
}

// digitNext reports whether s, less leading spaces, starts with a digit.
func digitNext(s string) bool {
	s = strings.TrimLeft(s, " ")
	return s != "" && isDigit(s[0])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
