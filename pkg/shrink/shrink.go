// Package shrink hands back the space of maps keyed by sessions or streams
// after their keys are gone: a Go map never shrinks, so one that held
// 10,000 sessions keeps their buckets (about 100 bytes a key) after the
// sessions end, and the node's memory stays at its peak.
package shrink

// MinPeak is the smallest peak worth shrinking from, in keys.
const MinPeak = 1024

// Peak is the most keys a map has held since it was last sized.
type Peak int

// Delete deletes key from *m and, once *m holds at most an eighth of its
// peak (of at least MinPeak keys), replaces *m with a copy sized to the
// keys left. Callers hold whatever lock guards *m and p.
func Delete[M ~map[K]V, K comparable, V any](m *M, p *Peak, key K) {
	if n := len(*m); n > int(*p) {
		*p = Peak(n)
	}
	delete(*m, key)
	n := len(*m)
	if off || int(*p) < MinPeak || n > int(*p)/8 {
		return
	}
	c := make(M, n)
	for k, v := range *m {
		c[k] = v
	}
	*m, *p = c, Peak(n)
}
