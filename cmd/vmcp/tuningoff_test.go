package main

import "testing"

// TestTuningOffWasIgnored pins VMCP_TUNING_OFF, make bench's switch for
// the tuning row: each piece named, spaces and empty items ignored.
func TestTuningOffWasIgnored(t *testing.T) {
	t.Setenv("VMCP_TUNING_OFF", " gogc,, bulkgc ")
	off := tuningOffFromEnv()
	if !off["gogc"] || !off["bulkgc"] || off["gctuner"] || len(off) != 2 {
		t.Fatalf("VMCP_TUNING_OFF=\" gogc,, bulkgc \" read as %v", off)
	}
	t.Setenv("VMCP_TUNING_OFF", "")
	if off := tuningOffFromEnv(); len(off) != 0 {
		t.Fatalf("empty VMCP_TUNING_OFF read as %v", off)
	}
}
