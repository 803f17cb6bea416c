package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLength is the longest tool or prompt name the spec allows (SEP-986:
// 1 to 128 characters from [A-Za-z0-9_.-]).
const MaxNameLength = 128

// nameHashLen is the number of hex digits of the hash suffix.
const nameHashLen = 8

// ValidName makes an advertised tool or prompt name valid. A name that is
// already valid (1–128 characters, all in [A-Za-z0-9_.-]) is returned as
// is. Otherwise every character outside that set becomes '_', the result is
// cut to its first 119 characters, and '_' plus the first 8 hex digits of
// the SHA-256 of the whole original name are appended. The rule depends on
// the name alone, so it is stable across restarts, and the hash keeps two
// names that differ only in their tail or in replaced characters apart.
func ValidName(name string) string {
	if validName(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if validNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() == MaxNameLength-1-nameHashLen {
			break
		}
	}
	sum := sha256.Sum256([]byte(name))
	return b.String() + "_" + hex.EncodeToString(sum[:])[:nameHashLen]
}

func validName(name string) bool {
	if name == "" || len(name) > MaxNameLength {
		return false
	}
	for _, r := range name {
		if !validNameRune(r) {
			return false
		}
	}
	return true
}

func validNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
}
