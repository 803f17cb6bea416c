package wire

import "sync"

// Message buffers: a large response built per request (a list page of a
// thousand items is a few hundred KB) would be garbage right after it is
// written, and the collector would let the heap grow by as much per
// request. Buffer and Release reuse them.

// maxPooled is the largest buffer kept for reuse (larger ones are left to
// the collector, so the pool never pins much memory).
const maxPooled = 4 << 20

var buffers = sync.Pool{New: func() any { return new([]byte) }}

// Buffer returns an empty buffer to build a message in; hand it back with
// Release once the message is written (and nothing refers to it).
func Buffer() *[]byte {
	b := buffers.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// Release returns b for reuse.
func Release(b *[]byte) {
	if cap(*b) <= maxPooled {
		buffers.Put(b)
	}
}
