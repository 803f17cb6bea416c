package pagination

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewCodecKeyLength(t *testing.T) {
	assert.Panics(t, func() { NewCodec(nil) })
	assert.Panics(t, func() { NewCodec(make([]byte, 31)) })
	assert.NotPanics(t, func() { NewCodec(make([]byte, 32)) })

	key := append([]byte(nil), testKey...)
	c := NewCodec(key)
	s := c.Encode(Cursor{Verb: "tools/list", LastKey: "a", Delivered: 1})
	key[0] ^= 1 // the codec copied its key
	_, err := c.Decode(s, "tools/list", "")
	assert.NoError(t, err)
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	c := newTestCodec()
	for _, cur := range []Cursor{
		{Verb: "tools/list", LastKey: "", Delivered: 0},
		{Verb: "prompts/list", LastKey: "greet", Delivered: 1},
		{Verb: "resources/list", LastKey: "file:///a%20b?q=é", Delivered: 300},
		{Verb: "resources/templates/list", LastKey: strings.Repeat("u", 700), Delivered: math.MaxInt},
	} {
		s := c.Encode(cur)
		assert.LessOrEqual(t, len(s), MaxCursorLen)
		assert.True(t, isBase64URL(s), "base64url without padding: %q", s)
		got, err := c.Decode(s, cur.Verb, "")
		require.NoError(t, err)
		assert.Equal(t, cur, got)
	}
	neg, err := c.Decode(c.Encode(Cursor{Verb: "v", LastKey: "k", Delivered: -5}), "v", "")
	require.NoError(t, err)
	assert.Equal(t, 0, neg.Delivered)
}

func TestMaxEncodableKey(t *testing.T) {
	c := newTestCodec()
	for _, verb := range listVerbs {
		k := strings.Repeat("k", maxEncodableKey(verb))
		s := c.Encode(Cursor{Verb: verb, LastKey: k, Delivered: math.MaxInt})
		assert.LessOrEqual(t, len(s), MaxCursorLen, verb)
		_, err := c.Decode(s, verb, "")
		assert.NoError(t, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	c := newTestCodec()
	valid := c.Encode(Cursor{Verb: "tools/list", LastKey: "weather_get", Delivered: 2})
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

	check := func(t *testing.T, s, why string) {
		t.Helper()
		cur, err := c.Decode(s, "tools/list", "")
		require.ErrorIs(t, err, ErrInvalidCursor, "%s: %q", why, s)
		assert.Contains(t, err.Error(), why)
		assert.Equal(t, Cursor{}, cur)
	}

	t.Run("flipped char", func(t *testing.T) {
		for i := range valid {
			b := []byte(valid)
			b[i] = alphabet[(strings.IndexByte(alphabet, b[i])+1)%len(alphabet)]
			_, err := c.Decode(string(b), "tools/list", "")
			assert.ErrorIs(t, err, ErrInvalidCursor, "flip at %d", i)
		}
		b := []byte(valid)
		b[len(b)/2] = alphabet[(strings.IndexByte(alphabet, b[len(b)/2])+1)%len(alphabet)]
		check(t, string(b), "integrity")
	})
	t.Run("truncated", func(t *testing.T) {
		for n := 1; n < len(valid); n++ {
			_, err := c.Decode(valid[:n], "tools/list", "")
			assert.ErrorIs(t, err, ErrInvalidCursor, "prefix %d", n)
		}
		check(t, valid[:8], "too short")
	})
	t.Run("extended", func(t *testing.T) { check(t, valid+"AAAA", "integrity") })
	t.Run("10KB", func(t *testing.T) { check(t, strings.Repeat("A", 10*1024), "over the 1024-byte limit") })
	t.Run("just over limit", func(t *testing.T) { check(t, strings.Repeat("A", MaxCursorLen+1), "limit") })
	t.Run("empty", func(t *testing.T) { check(t, "", "empty") })
	t.Run("non-base64", func(t *testing.T) {
		for _, s := range []string{"!!!!", "a b", valid + "=", valid[:4] + "\n" + valid[4:], "ab+/", "A"} {
			check(t, s, "not base64url")
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		other := NewCodec([]byte("another-key-another-key-another-key"))
		_, err := other.Decode(valid, "tools/list", "")
		require.ErrorIs(t, err, ErrInvalidCursor)
		assert.Contains(t, err.Error(), "integrity")
	})
	t.Run("wrong verb", func(t *testing.T) {
		check(t, c.Encode(Cursor{Verb: "prompts/list"}), "cursor belongs to prompts/list, not tools/list")
	})
	t.Run("bad payloads", func(t *testing.T) {
		for why, payload := range map[string][]byte{
			"unsupported cursor version 3": {3, 10, 't', 'o', 'o', 'l', 's', '/', 'l', 'i', 's', 't', 0, 0},
			"malformed cursor verb":        {2, 50, 't'},
			"malformed cursor key":         {2, 10, 't', 'o', 'o', 'l', 's', '/', 'l', 'i', 's', 't', 0x80},
			"malformed cursor count":       {2, 10, 't', 'o', 'o', 'l', 's', '/', 'l', 'i', 's', 't', 0, 0x80, 0},
			"malformed cursor owner":       {2, 10, 't', 'o', 'o', 'l', 's', '/', 'l', 'i', 's', 't', 0, 0, 5, 'a'},
			"trailing bytes":               {2, 10, 't', 'o', 'o', 'l', 's', '/', 'l', 'i', 's', 't', 0, 0, 0, 0},
		} {
			check(t, c.seal(payload), why)
		}
	})
}

func TestCodecConcurrent(t *testing.T) {
	c := newTestCodec()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				cur := Cursor{Verb: listVerbs[g%4], LastKey: strings.Repeat("k", i), Delivered: g * i}
				got, err := c.Decode(c.Encode(cur), cur.Verb, "")
				assert.NoError(t, err)
				assert.Equal(t, cur, got)
			}
		}()
	}
	wg.Wait()
}

func TestParamCursor(t *testing.T) {
	for _, tc := range []struct {
		raw  json.RawMessage
		want string
	}{
		{nil, ""},
		{json.RawMessage(""), ""},
		{json.RawMessage("null"), ""},
		{json.RawMessage(" null "), ""},
		{json.RawMessage(`""`), ""},
		{json.RawMessage(`"abc-_09"`), "abc-_09"},
		{json.RawMessage(` "abc" `), "abc"},
		{json.RawMessage(`"a\u0042\"c"`), `aB"c`},
	} {
		got, err := ParamCursor(tc.raw)
		require.NoError(t, err, "%q", tc.raw)
		assert.Equal(t, tc.want, got, "%q", tc.raw)
	}
	for _, raw := range []string{`123`, `{}`, `{"a":"b"}`, `[]`, `["a"]`, `true`, `"abc`, `"a" "b"`, `nul`} {
		_, err := ParamCursor(json.RawMessage(raw))
		require.ErrorIs(t, err, ErrInvalidCursor, raw)
		assert.Contains(t, err.Error(), "cursor must be a string", raw)
	}
}
