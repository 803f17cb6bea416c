package wire

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of a client-supplied header value or name an
// error message quotes at most.
const MaxQuoted = 256

// Clip returns s cut to its first MaxQuoted bytes (on a UTF-8 boundary).
func Clip(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	n := MaxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Quote is s quoted for an error message (as %q), at most its first
// MaxQuoted bytes; a longer s is marked as cut, with its length. Every
// message that quotes a header value or a name a client sent uses it.
func Quote(s string) string {
	c := Clip(s)
	if len(c) == len(s) {
		return strconv.Quote(s)
	}
	return strconv.Quote(c) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
