//go:build !vmcp_noshrink

package shrink

// off is true in a build with the vmcp_noshrink tag: Delete only deletes
// (make bench's tuning comparison, issue 28; never a release build).
const off = false
