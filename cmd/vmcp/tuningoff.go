package main

import (
	"os"
	"strings"
)

// tuningOff is the set of tuning pieces VMCP_TUNING_OFF (comma separated:
// gctuner, gogc, bulkgc) switches off, read once at start. It exists for make
// bench's tuning comparison (the same binary measured with a piece on and
// off, issue 28), not as configuration.
type tuningOff map[string]bool

// tuningOffFromEnv reads VMCP_TUNING_OFF.
func tuningOffFromEnv() tuningOff {
	off := tuningOff{}
	for _, p := range strings.Split(os.Getenv("VMCP_TUNING_OFF"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			off[p] = true
		}
	}
	return off
}
