package aggregator

import (
	"bytes"
	"encoding/json"
	"sync"
)

// A catalogue's lists are encoded as JSON once each, on first use, and the
// bytes are kept with the immutable catalogue (they die with it), so a
// list page is assembled from them instead of re-encoding its items per
// request. A principal's own catalogue (For) keeps its own.

// JSONList is one list's items encoded as JSON, as json.Marshal encodes
// each: item i is buf[off[i]:off[i+1]-1], every item followed by a comma
// in buf. It is immutable.
type JSONList struct {
	buf  []byte
	off  []int         // len(items)+1 offsets into buf
	errs map[int]error // items json.Marshal fails on, by index
}

// encodings are a catalogue's JSONLists, built on first use.
type encodings struct {
	once  [4]sync.Once
	lists [4]*JSONList
}

// kindIndex is the encodings slot of k (-1: not a list kind).
func kindIndex(k Kind) int {
	switch k {
	case KindTools:
		return 0
	case KindResources:
		return 1
	case KindTemplates:
		return 2
	case KindPrompts:
		return 3
	}
	return -1
}

// JSON returns the list of kind k encoded as JSON (built on the first
// call for k, then shared by every caller of this catalogue). It panics
// on a k that is not one of the four list kinds.
func (c *Catalogue) JSON(k Kind) *JSONList {
	i := kindIndex(k)
	c.enc.once[i].Do(func() {
		switch k {
		case KindTools:
			c.enc.lists[i] = encodeList(c.Tools)
		case KindResources:
			c.enc.lists[i] = encodeList(c.Resources)
		case KindTemplates:
			c.enc.lists[i] = encodeList(c.Templates)
		default:
			c.enc.lists[i] = encodeList(c.Prompts)
		}
	})
	return c.enc.lists[i]
}

// encodeList encodes items with one json.Encoder (HTML-escaped, as
// json.Marshal), each followed by a comma.
func encodeList[T any](items []T) *JSONList {
	l := &JSONList{off: make([]int, 0, len(items)+1)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i, x := range items {
		l.off = append(l.off, buf.Len())
		if err := enc.Encode(x); err != nil { // nothing written
			if l.errs == nil {
				l.errs = map[int]error{}
			}
			l.errs[i] = err
			continue
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.WriteByte(',')
	}
	l.off = append(l.off, buf.Len())
	l.buf = buf.Bytes()
	return l
}

// Len is the number of items.
func (l *JSONList) Len() int { return len(l.off) - 1 }

// Item is item i's JSON (callers must not modify it), or the error
// json.Marshal gave for it.
func (l *JSONList) Item(i int) ([]byte, error) {
	if err := l.errs[i]; err != nil {
		return nil, err
	}
	return l.buf[l.off[i] : l.off[i+1]-1], nil
}

// SizeHint is the length of items [i, j) comma separated (AppendRange).
func (l *JSONList) SizeHint(i, j int) int {
	if j <= i {
		return 0
	}
	return l.off[j] - l.off[i] - 1
}

// AppendRange appends items [i, j) to dst, comma separated, or fails
// with the encoding error of an item in the range.
func (l *JSONList) AppendRange(dst []byte, i, j int) ([]byte, error) {
	if j <= i {
		return dst, nil
	}
	for k := range l.errs {
		if k >= i && k < j {
			return dst, l.errs[k]
		}
	}
	return append(dst, l.buf[l.off[i]:l.off[j]-1]...), nil
}
