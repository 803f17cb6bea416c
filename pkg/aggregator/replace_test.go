package aggregator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reload's Replace removes one backend's tools and adds another's in one
// rebuild: listeners are told once, and the new policy (order) applies.
func TestReplaceIsOneChange(t *testing.T) {
	a, changes, _ := newRecorded(t, Policy{Order: []string{"keep", "gone"}})
	a.Update(Inventory{Backend: "keep", Tools: tools("echo")})
	a.Update(Inventory{Backend: "gone", Tools: tools("bye")})
	n := len(*changes)
	a.Replace(Policy{Order: []string{"keep", "fresh"}}, []Inventory{{Backend: "fresh", Tools: tools("hi")}}, []string{"gone"})
	require.Len(t, *changes, n+1, "one OnChange for the whole reload")
	assert.Equal(t, []Kind{KindTools}, (*changes)[n].kinds)
	var names []string
	for _, tl := range a.Current().Tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"fresh_hi", "keep_echo"}, names)
	_, rt, ok := a.Current().Tool("fresh_hi")
	require.True(t, ok)
	assert.Equal(t, "fresh", rt.Backend)

	a.Replace(Policy{Order: []string{"keep", "fresh"}}, nil, nil)
	assert.Len(t, *changes, n+1, "a reload that changes nothing tells no one")
}
