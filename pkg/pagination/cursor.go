// Package pagination implements keyset pagination over vmcp's aggregated,
// key-sorted lists (tools/list, resources/list, resources/templates/list,
// prompts/list) with opaque, HMAC-protected cursors, per MCP pagination:
// the cursor is opaque to clients and nextCursor is omitted on the last page.
package pagination

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"sync"
)

// Cursor is the decoded position of an MCP list cursor: the list verb it
// belongs to, the last key delivered, how many items with LastKey were
// already delivered (so a page can resume inside a run of equal keys), and
// the principal it was minted for (identity.Principal.Tag, "" anonymous):
// lists are per-principal views, and a cursor is only valid on its own.
type Cursor struct {
	Verb      string
	LastKey   string
	Delivered int
	Owner     string
}

// ErrInvalidCursor is wrapped by every cursor decode failure; callers answer
// it with JSON-RPC -32602 Invalid params (HTTP 400). The wrapping message
// names what is wrong, e.g. "cursor belongs to tools/list, not prompts/list".
var ErrInvalidCursor = errors.New("invalid cursor")

// MaxCursorLen is the longest encoded cursor Decode accepts; longer ones are
// rejected with ErrInvalidCursor (-32602) before any decoding work.
const MaxCursorLen = 1024

const (
	cursorVersion = 2  // first byte of every payload (2: with Owner)
	tagLen        = 16 // HMAC-SHA256 truncated to 128 bits
	minKeyLen     = 32 // minimum HMAC key length accepted by NewCodec
)

// enc is base64url without padding; Strict rejects non-zero trailing bits so
// every accepted cursor has exactly one spelling.
var enc = base64.RawURLEncoding.Strict()

// Codec mints and verifies opaque MCP cursors: base64url(version | verb |
// LastKey | Delivered | Owner | HMAC-SHA256 tag). It is safe for concurrent use.
type Codec struct {
	key  []byte
	macs sync.Pool // of hash.Hash keyed with key
}

// NewCodec returns a Codec whose cursors are integrity-protected with
// HMAC-SHA256 under key. key must be at least 32 bytes; a shorter key is a
// programming error and panics. The key is copied.
func NewCodec(key []byte) *Codec {
	if len(key) < minKeyLen {
		panic(fmt.Sprintf("pagination: HMAC key is %d bytes, need at least %d", len(key), minKeyLen))
	}
	c := &Codec{key: append([]byte(nil), key...)}
	c.macs.New = func() any { return hmac.New(sha256.New, c.key) }
	return c
}

// tag appends the truncated HMAC of payload to dst.
func (c *Codec) tag(dst, payload []byte) []byte {
	m := c.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(payload)
	var sum [sha256.Size]byte
	out := m.Sum(sum[:0])
	c.macs.Put(m)
	return append(dst, out[:tagLen]...)
}

// Encode returns the opaque base64url form of cur, HMAC-tagged. A negative
// Delivered is encoded as 0. MCP clients must treat the result as opaque;
// Page never mints a cursor longer than MaxCursorLen.
func (c *Codec) Encode(cur Cursor) string {
	d := uint64(0)
	if cur.Delivered > 0 {
		d = uint64(cur.Delivered)
	}
	n := 1 + uvarintLen(uint64(len(cur.Verb))) + len(cur.Verb) +
		uvarintLen(uint64(len(cur.LastKey))) + len(cur.LastKey) + uvarintLen(d) +
		uvarintLen(uint64(len(cur.Owner))) + len(cur.Owner)
	buf := make([]byte, 0, n+tagLen)
	buf = append(buf, cursorVersion)
	buf = binary.AppendUvarint(buf, uint64(len(cur.Verb)))
	buf = append(buf, cur.Verb...)
	buf = binary.AppendUvarint(buf, uint64(len(cur.LastKey)))
	buf = append(buf, cur.LastKey...)
	buf = binary.AppendUvarint(buf, d)
	buf = binary.AppendUvarint(buf, uint64(len(cur.Owner)))
	buf = append(buf, cur.Owner...)
	return c.seal(buf)
}

// seal appends the tag to payload and base64url-encodes the result.
func (c *Codec) seal(payload []byte) string {
	return enc.EncodeToString(c.tag(payload, payload))
}

// Decode verifies and decodes cursor s for list verb (e.g. "tools/list")
// presented by the principal tagged owner (identity.Principal.Tag). s must
// be non-empty (an empty MCP cursor means the first page; Page handles
// it). Over-long, non-base64url, tampered, wrong-key, unknown-version,
// other-verb or other-principal cursors fail wrapping ErrInvalidCursor.
func (c *Codec) Decode(s, verb, owner string) (Cursor, error) {
	switch {
	case s == "":
		return Cursor{}, fmt.Errorf("%w: cursor is empty", ErrInvalidCursor)
	case len(s) > MaxCursorLen:
		return Cursor{}, fmt.Errorf("%w: cursor is %d bytes, over the %d-byte limit", ErrInvalidCursor, len(s), MaxCursorLen)
	case !isBase64URL(s):
		return Cursor{}, fmt.Errorf("%w: cursor is not base64url", ErrInvalidCursor)
	}
	raw, err := enc.DecodeString(s)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: cursor is not base64url", ErrInvalidCursor)
	}
	if len(raw) < 1+tagLen {
		return Cursor{}, fmt.Errorf("%w: cursor is too short", ErrInvalidCursor)
	}
	payload, got := raw[:len(raw)-tagLen], raw[len(raw)-tagLen:]
	var want [tagLen]byte
	if !hmac.Equal(got, c.tag(want[:0], payload)) {
		return Cursor{}, fmt.Errorf("%w: cursor failed its integrity check (tampered or minted by another key)", ErrInvalidCursor)
	}
	return parsePayload(payload, verb, owner)
}

// parsePayload decodes an authenticated payload minted for want. It accepts
// only the canonical form Encode produces, so decode→encode is the identity.
func parsePayload(p []byte, want, owner string) (Cursor, error) {
	if p[0] != cursorVersion {
		return Cursor{}, fmt.Errorf("%w: unsupported cursor version %d", ErrInvalidCursor, p[0])
	}
	p = p[1:]
	verb, p, ok := readBytes(p)
	if !ok {
		return Cursor{}, fmt.Errorf("%w: malformed cursor verb", ErrInvalidCursor)
	}
	key, p, ok := readBytes(p)
	if !ok {
		return Cursor{}, fmt.Errorf("%w: malformed cursor key", ErrInvalidCursor)
	}
	d, p, ok := readUvarint(p)
	if !ok || d > math.MaxInt {
		return Cursor{}, fmt.Errorf("%w: malformed cursor count", ErrInvalidCursor)
	}
	tag, p, ok := readBytes(p)
	if !ok {
		return Cursor{}, fmt.Errorf("%w: malformed cursor owner", ErrInvalidCursor)
	}
	if len(p) != 0 {
		return Cursor{}, fmt.Errorf("%w: cursor has %d trailing bytes", ErrInvalidCursor, len(p))
	}
	if string(verb) != want {
		return Cursor{}, fmt.Errorf("%w: cursor belongs to %s, not %s", ErrInvalidCursor, verb, want)
	}
	if string(tag) != owner {
		return Cursor{}, fmt.Errorf("%w: cursor was issued to another principal", ErrInvalidCursor)
	}
	return Cursor{Verb: want, LastKey: string(key), Delivered: int(d), Owner: owner}, nil
}

// readUvarint reads a minimally encoded uvarint from p.
func readUvarint(p []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(p)
	if n <= 0 || n != uvarintLen(v) {
		return 0, p, false
	}
	return v, p[n:], true
}

// readBytes reads a uvarint length followed by that many bytes.
func readBytes(p []byte) ([]byte, []byte, bool) {
	n, rest, ok := readUvarint(p)
	if !ok || n > uint64(len(rest)) {
		return nil, p, false
	}
	return rest[:n], rest[n:], true
}

// uvarintLen is the number of bytes binary.AppendUvarint uses for v.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// isBase64URL reports whether s uses only the unpadded base64url alphabet
// (the std decoder would otherwise silently skip '\r' and '\n').
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// maxOwnerLen is the longest Owner counted on in cursor sizes (a Tag is 16).
const maxOwnerLen = 32

// maxEncodableKey is the longest LastKey for which a cursor on verb stays
// within MaxCursorLen whatever Delivered is (and an Owner up to maxOwnerLen).
func maxEncodableKey(verb string) int {
	raw := MaxCursorLen / 4 * 3 // decoded bytes that fit in MaxCursorLen chars
	raw -= 1 + uvarintLen(uint64(len(verb))) + len(verb) + binary.MaxVarintLen64 + 1 + maxOwnerLen + tagLen
	return raw - uvarintLen(uint64(raw)) // key length prefix
}
