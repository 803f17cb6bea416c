//go:build vmcp_noscan

package wire

// StdJSON is true in a build with the vmcp_noscan tag: the hand-written
// scanner and key interning are replaced by encoding/json (make bench's
// tuning comparison, issue 28; never a release build).
const StdJSON = true
