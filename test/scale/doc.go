// Package scale holds the three-node scale test of vmcp's cluster: node
// processes (this package's test binary, re-executed as a vmcp node) on one
// private redis-server, with the per-session Redis figures the projection
// in docs/arch/scale.md uses asserted from INFO commandstats deltas. It has
// no non-test code.
package scale
