package pagination

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that every failure wraps
// ErrInvalidCursor, and that any cursor that decodes re-encodes to the very
// same string (and so the same Cursor). Inputs are tried both as cursors and,
// to reach the parser past the HMAC, as payloads sealed with the codec's key.
func FuzzDecode(f *testing.F) {
	c := newTestCodec()
	for _, cur := range []Cursor{
		{Verb: "tools/list", LastKey: "weather_get", Delivered: 1},
		{Verb: "tools/list", LastKey: "", Delivered: 0},
		{Verb: "tools/list", LastKey: "a\x00b", Delivered: 1 << 40},
		{Verb: "prompts/list", LastKey: "greet", Delivered: 3},
		{Verb: "resources/list", LastKey: "file:///tmp/x", Delivered: 1000},
	} {
		s := c.Encode(cur)
		f.Add(s)
		f.Add(s[:len(s)-1])
		f.Add(s + "A")
	}
	for _, s := range []string{
		"", "A", "AA", "AAAA", "!!!!", "====", "\n", strings.Repeat("A", MaxCursorLen+1),
		"\x01\x0atools/list\x00\x00", "\x01\x0atools/list\x01k\x80\x00", "\x02\x00\x00\x00",
	} {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, s string) {
		check := func(s string) {
			cur, err := c.Decode(s, "tools/list", "")
			if err != nil {
				if !errors.Is(err, ErrInvalidCursor) {
					t.Fatalf("Decode(%q) error %v does not wrap ErrInvalidCursor", s, err)
				}
				if cur != (Cursor{}) {
					t.Fatalf("Decode(%q) failed but returned %+v", s, cur)
				}
				return
			}
			if cur.Verb != "tools/list" || cur.Delivered < 0 {
				t.Fatalf("Decode(%q) = %+v", s, cur)
			}
			again := c.Encode(cur)
			if again != s {
				t.Fatalf("Decode(%q) = %+v re-encodes to %q", s, cur, again)
			}
			back, err := c.Decode(again, "tools/list", "")
			if err != nil || back != cur {
				t.Fatalf("re-encoded %+v decodes to %+v, %v", cur, back, err)
			}
		}
		check(s)
		check(c.seal([]byte(s)))
	})
}

// FuzzRoundTrip checks Encode→Decode is the identity for any cursor Page can
// mint, and that Decode on another verb is rejected.
func FuzzRoundTrip(f *testing.F) {
	c := newTestCodec()
	f.Add("tools/list", "weather_get", 1)
	f.Add("resources/templates/list", "", 0)
	f.Add("", "\xff\xfe", 1<<62)
	f.Fuzz(func(t *testing.T, verb, key string, delivered int) {
		if delivered < 0 {
			delivered = -delivered
		}
		if delivered < 0 {
			delivered = 0 // MinInt
		}
		cur := Cursor{Verb: verb, LastKey: key, Delivered: delivered}
		s := c.Encode(cur)
		got, err := c.Decode(s, verb, "")
		if len(s) > MaxCursorLen {
			if !errors.Is(err, ErrInvalidCursor) {
				t.Fatalf("over-long cursor accepted: %v", err)
			}
			return
		}
		if err != nil || got != cur {
			t.Fatalf("round trip of %+v gave %+v, %v", cur, got, err)
		}
		if _, err := c.Decode(s, verb+"x", ""); !errors.Is(err, ErrInvalidCursor) {
			t.Fatalf("cursor for %q accepted for %q", verb, verb+"x")
		}
	})
}
