package main

import (
	"fmt"
)

// tuneCalls measures the Legacy and the Modern call rows with vmcp on and
// with the GC tuner (or its GOGC half) and the scanner off, interleaved
// like the call rows, with direct and the plain proxy in the same rounds.
func tuneCalls(tmp string, vs []variant, t *tally) error {
	for _, r := range []struct {
		row
		short string
		vs    []variant
	}{
		{row{"Legacy client → stateful backend", legacyVersion, false}, "Legacy", pick(vs, "gctuner", "gogc", "scanner")},
		{row{"Modern client → stateless backend", "", true}, "Modern", pick(vs, "gctuner", "gogc", "scanner")},
	} {
		if err := tuneCallRow(tmp, r.row, r.short, r.vs, t); err != nil {
			return fmt.Errorf("%s: %w", r.short, err)
		}
	}
	return nil
}

// tuneCallRow runs one call row's rounds over direct, the plain proxy and
// one vmcp per variant.
func tuneCallRow(tmp string, r row, short string, vs []variant, t *tally) error {
	fmt.Printf("  calls, %s ...\n", r.name)
	be, beURL, err := startListening(*echoBin, echoArgs(r), nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	targets := []*target{{name: "direct", url: beURL}}
	pp, ppURL, err := startListening(*plainBin, []string{"-backend", beURL}, nil)
	if err != nil {
		return fmt.Errorf("plainproxy: %w", err)
	}
	defer pp.stop()
	targets = append(targets, &target{name: "proxy", url: ppURL, hop: pp})
	for _, v := range vs {
		err := v.with(func() error {
			vm, url, err := startVMCP(tmp, beURL, "")
			if err == nil {
				targets = append(targets, &target{name: v.name, url: url, vmcp: vm, hop: vm})
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("vmcp %s: %w", v.name, err)
		}
		defer targets[len(targets)-1].vmcp.stop()
	}
	for _, tg := range targets {
		tg.be = be
		if err := tg.connect(r.client); err != nil {
			return fmt.Errorf("%s: %w", tg.name, err)
		}
		defer tg.close()
		if err := tg.warm(); err != nil {
			return fmt.Errorf("%s: %w", tg.name, err)
		}
	}
	return tuneCallRounds(targets, r, short, vs, t)
}

// tuneCallRounds runs the rounds (each starts with the next target: round
// rotates the slices' order) and records each target's figures.
func tuneCallRounds(targets []*target, r row, short string, vs []variant, t *tally) error {
	pieces := "gctuner,gogc,scanner"
	for i := range *rounds {
		rot := append(append([]*target{}, targets[i%len(targets):]...), targets[:i%len(targets)]...)
		ms, err := round(rot, false, r)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		for j, tg := range rot {
			m := ms[j]
			t.add(fmt.Sprintf("%s c=%d req/s", short, *conc), pieces, tg.name, m.rpsN)
			if tg.hop != nil {
				t.add(short+" CPU µs/call (hop)", pieces, tg.name, m.cpuUS)
			}
			if tg.vmcp != nil {
				t.add(short+" KB alloc/call", pieces, tg.name, m.bytes/1024)
				t.add(short+" peak RSS MiB (round)", pieces, tg.name, tg.vmcp.peakRSS())
				if err := tg.vmcp.resetPeakRSS(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
