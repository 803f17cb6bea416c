//go:build vmcp_noscan

package wire

// StdJSON is true in a build with the vmcp_noscan tag: the hand-written
// scanner (EachMember, Decode, DecodeObject, the Modern tools/call params)
// gives way to encoding/json (make bench's tuning row, issue 28; never a
// release build).
const StdJSON = true
