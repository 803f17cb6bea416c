package wire

import (
	"slices"
	"testing"
)

// member is one EachMember call's arguments.
type member struct{ key, value, whole string }

func members(t *testing.T, each func([]byte, func(k, v, m []byte)) error, in string) ([]member, error) {
	t.Helper()
	var out []member
	err := each([]byte(in), func(k, v, m []byte) { out = append(out, member{string(k), string(v), string(m)}) })
	return out, err
}

// TestEachMemberStdWasNotTheScan pins the vmcp_noscan build's stand-in
// (make bench's tuning row measures the scanner against it): on the decode
// seeds and objects with spacing, escapes and duplicates it makes the
// same calls as the hand-written scan, and fails where the scan fails.
func TestEachMemberStdWasNotTheScan(t *testing.T) {
	t.Parallel()
	inputs := append(slices.Clone(decodeSeeds),
		` { "a" : 1 , "b":[1, {"c":"}"}] ,"a":"x\"y", "\u0041":null } `,
		`{}`, ` {  } `, `[1]`, `"s"`, `{"a":1`, `{"a" 1}`)
	for _, in := range inputs {
		want, werr := members(t, eachMember, in)
		got, gerr := members(t, eachMemberStd, in)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: scan error %v, encoding/json error %v", in, werr, gerr)
			continue
		}
		if werr == nil && !slices.Equal(got, want) {
			t.Errorf("%q: encoding/json gave %q, the scan %q", in, got, want)
		}
	}
}
