package pagination

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Page returns the page of items (sorted ascending by key; equal keys keep
// slice order) after MCP cursor s ("" = first page, valid per 2026-07-28), at
// most size items (<= 0: all), and the next cursor, "" on the last page so
// nextCursor is omitted. Cursors are minted for and accepted from the
// principal tagged owner only (items is that principal's view). page
// aliases items; errors wrap ErrInvalidCursor. A key too long for a cursor
// (> ~700 bytes) can't end a page (see pageEnd).
func Page[T any](c *Codec, items []T, key func(T) string, verb, owner, s string, size int) (page []T, next string, err error) {
	start, end, next, err := Bounds(c, items, key, verb, owner, s, size)
	if err != nil {
		return nil, "", err
	}
	return nonNil(items[start:end]), next, nil
}

// Bounds is Page as indices: the page is items[start:end] (start == end:
// empty), with the same next cursor and errors.
func Bounds[T any](c *Codec, items []T, key func(T) string, verb, owner, s string, size int) (start, end int, next string, err error) {
	if s != "" {
		cur, err := c.Decode(s, verb, owner)
		if err != nil {
			return 0, 0, "", err
		}
		start = resume(items, key, cur)
	}
	n := len(items)
	if size <= 0 || size >= n-start {
		return start, n, "", nil
	}
	end = pageEnd(items, key, verb, start, start+size)
	if end >= n {
		return start, n, "", nil
	}
	last := key(items[end-1])
	runStart := sort.Search(end, func(i int) bool { return key(items[i]) >= last })
	next = c.Encode(Cursor{Verb: verb, LastKey: last, Delivered: end - runStart, Owner: owner})
	return start, end, next, nil
}

// resume returns the index of the first item after cur: past the first
// cur.Delivered items keyed cur.LastKey (the whole run if it has shrunk), or
// at the next key if cur.LastKey vanished.
func resume[T any](items []T, key func(T) string, cur Cursor) int {
	n := len(items)
	i := sort.Search(n, func(i int) bool { return key(items[i]) >= cur.LastKey })
	if i == n || key(items[i]) != cur.LastKey {
		return i
	}
	j := i + sort.Search(n-i, func(k int) bool { return key(items[i+k]) > cur.LastKey })
	if cur.Delivered >= j-i {
		return j
	}
	return i + cur.Delivered
}

// pageEnd returns the exclusive end of the page [start, end), moved so that
// the last item's key fits in a cursor of at most MaxCursorLen: first back
// towards start, else forward (possibly to len(items)). Normally it is end.
func pageEnd[T any](items []T, key func(T) string, verb string, start, end int) int {
	limit := maxEncodableKey(verb)
	for e := end; e > start; e-- {
		if len(key(items[e-1])) <= limit {
			return e
		}
	}
	for e := end + 1; e < len(items); e++ {
		if len(key(items[e-1])) <= limit {
			return e
		}
	}
	return len(items)
}

// nonNil returns p, or an empty non-nil slice so JSON gets [] not null.
func nonNil[T any](p []T) []T {
	if p == nil {
		return []T{}
	}
	return p
}

// ParamCursor extracts the MCP `cursor` param from its raw JSON value:
// absent (nil/empty) or null gives "" (first page), a JSON string gives its
// value (possibly "", also the first page), anything else (number, object,
// array, bool) fails with ErrInvalidCursor "cursor must be a string" (-32602).
func ParamCursor(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("%w: cursor must be a string", ErrInvalidCursor)
	}
	if plainJSONString(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: cursor must be a string: %v", ErrInvalidCursor, err)
	}
	return s, nil
}

// plainJSONString reports whether raw is a quoted printable-ASCII JSON string
// with no escapes (every cursor Encode mints), skipping encoding/json.
func plainJSONString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for _, b := range raw[1 : len(raw)-1] {
		if b < 0x20 || b >= 0x7f || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}
