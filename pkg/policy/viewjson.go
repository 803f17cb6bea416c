package policy

import (
	"encoding/json"

	"github.com/vmcp/vmcp/pkg/aggregator"
)

// indices are a filtered view's items as indices into its catalogue's
// lists (View.AppendJSON takes their JSON from the catalogue's).
type indices struct {
	filtered                             bool // false: the view's lists are the catalogue's
	tools, prompts, resources, templates []int32
}

// of is the index slice of list k.
func (x *indices) of(k aggregator.Kind) []int32 {
	switch k {
	case aggregator.KindTools:
		return x.tools
	case aggregator.KindPrompts:
		return x.prompts
	case aggregator.KindResources:
		return x.resources
	}
	return x.templates
}

// span is the range of catalogue indices items [start, end) (start <
// end) of list k fall within.
func (x *indices) span(k aggregator.Kind, start, end int) (int, int) {
	if !x.filtered {
		return start, end
	}
	idx := x.of(k)
	return int(idx[start]), int(idx[end-1]) + 1
}

// AppendJSON appends items [start, end) of the view's list k (KindTools,
// ...) to dst as json.Marshal encodes each, comma separated: the bytes
// its catalogue encoded once (aggregator.Catalogue.JSON), so nothing is
// re-encoded per page. It fails with an item's encoding error.
func (v *View) AppendJSON(dst []byte, k aggregator.Kind, start, end int) ([]byte, error) {
	if v.cat == nil { // made by hand: encode here
		return v.marshalRange(dst, k, start, end)
	}
	l := v.cat.JSON(k)
	if !v.idx.filtered {
		return l.AppendRange(dst, start, end)
	}
	idx := v.idx.of(k)[start:end]
	return appendItems(dst, len(idx), func(n int) ([]byte, error) { return l.Item(int(idx[n])) })
}

// appendItems appends the n items item(0..n-1) gives to dst, comma
// separated; it stops at the first error.
func appendItems(dst []byte, n int, item func(int) ([]byte, error)) ([]byte, error) {
	for i := range n {
		b, err := item(i)
		if err != nil {
			return dst, err
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, b...)
	}
	return dst, nil
}

// marshalRange is AppendJSON by json.Marshal of each item.
func (v *View) marshalRange(dst []byte, k aggregator.Kind, start, end int) ([]byte, error) {
	var items []any
	switch k {
	case aggregator.KindTools:
		for _, x := range v.Tools[start:end] {
			items = append(items, x)
		}
	case aggregator.KindPrompts:
		for _, x := range v.Prompts[start:end] {
			items = append(items, x)
		}
	case aggregator.KindResources:
		for _, x := range v.Resources[start:end] {
			items = append(items, x)
		}
	default:
		for _, x := range v.Templates[start:end] {
			items = append(items, x)
		}
	}
	return appendItems(dst, len(items), func(n int) ([]byte, error) { return json.Marshal(items[n]) })
}
