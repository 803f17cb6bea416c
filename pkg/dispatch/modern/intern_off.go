//go:build vmcp_nointern

package modern

// internOff is true in a build with the vmcp_nointern tag: _meta keys and
// values are copied per request instead of interned (make bench's tuning
// comparison, issue 28; never a release build).
const internOff = true
