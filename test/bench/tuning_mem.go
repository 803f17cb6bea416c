package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// rotate is vs in round i's order: each variant first in turn.
func rotate(vs []variant, i int) []variant {
	k := i % len(vs)
	return append(append([]variant{}, vs[k:]...), vs[:k]...)
}

// eachRound starts a fresh vmcp of config body per variant per round, in
// rotating order, and hands it to f; the vmcp is stopped after.
func eachRound(tmp, body string, vs []variant, f func(v variant, vm *proc, url string) error) error {
	for i := range *rounds {
		for _, v := range rotate(vs, i) {
			err := v.with(func() error {
				vm, url, err := startVMCPConfig(tmp, body)
				if err != nil {
					return err
				}
				defer vm.stop()
				if err := f(v, vm, url); err != nil {
					return fmt.Errorf("%w (vmcp stderr: %s)", err, vm.stderr)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", i+1, v.name, err)
			}
		}
	}
	return nil
}

// tuneIdle opens -tuning-idle idle Legacy sessions on a fresh vmcp and
// closes them: RSS per session, then RSS and heap after GC once idle.
func tuneIdle(tmp string, vs []variant, t *tally) error {
	fmt.Printf("  idle, %d sessions ...\n", *tuningIdle)
	be, beURL, err := startListening(*echoBin, []string{"-tools", "0"}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	body := fmt.Sprintf("backends:\n  - name: echo\n    url: %s\nsessions:\n  max: 30000\n", beURL)
	const pieces = "gctuner,gogc,shrink"
	return eachRound(tmp, body, pick(vs, "gctuner", "gogc", "shrink"), func(v variant, vm *proc, url string) error {
		base := vm.idle()
		ss, tr, err := openIdle(url, *tuningIdle)
		if err != nil {
			return err
		}
		loaded := vm.idle()
		closeIdle(ss, tr)
		after := vm.idle()
		heap, err := heapAfterGC(vm)
		if err != nil {
			return err
		}
		t.add("idle RSS KB/session", pieces, v.name, loaded.minus(base).per(*tuningIdle).rssKB)
		t.add("idle RSS MiB after close", pieces, v.name, after.rssKB/1024)
		t.add("idle after close ÷ before", pieces, v.name, after.rssKB/base.rssKB)
		t.add("idle heap MiB after close (GC)", pieces, v.name, heap)
		return nil
	})
}

// tuneAge makes -tuning-age calls by four Legacy sessions to a stdio
// backend (the go-sdk connection path): heap after GC, peak RSS, CPU.
func tuneAge(tmp string, vs []variant, t *tally) error {
	fmt.Printf("  age, %d calls ...\n", *tuningAge)
	bin := filepath.Join(tmp, "stdioserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./test/integration/harness/stdioserver").CombinedOutput(); err != nil {
		return fmt.Errorf("building stdioserver: %w: %s", err, out)
	}
	body := fmt.Sprintf("backends:\n  - name: echo\n    command: %s\naggregation:\n  conflict_resolution: priority\n  priority: [echo]\n", bin)
	const pieces = "gctuner,gogc,scanner"
	return eachRound(tmp, body, pick(vs, "gctuner", "gogc", "scanner"), func(v variant, vm *proc, url string) error {
		sessions, err := ageConnect(url)
		if err != nil {
			return err
		}
		defer func() {
			for _, cs := range sessions {
				_ = cs.Close()
			}
		}()
		cpu0, start := vm.cpu(), time.Now()
		if err := ageCalls(sessions, *tuningAge); err != nil {
			return err
		}
		secs, cpu := time.Since(start).Seconds(), vm.cpu()-cpu0
		heap, err := heapAfterGC(vm)
		if err != nil {
			return err
		}
		t.add("age calls/s", pieces, v.name, float64(*tuningAge)/secs)
		t.add("age vmcp CPU µs/call", pieces, v.name, cpu*1e6/float64(*tuningAge))
		t.add("age peak RSS MiB", pieces, v.name, vm.peakRSS())
		t.add("age heap MiB after GC", pieces, v.name, heap)
		return nil
	})
}

// tuneWalk starts a fresh vmcp over two backends of -walk-tools tools each
// and waits for a client's full walk: peak RSS and CPU at start.
func tuneWalk(tmp string, vs []variant, t *tally) error {
	fmt.Printf("  walk start, 2 × %d tools ...\n", *walkTools)
	var urls []string
	for range 2 {
		be, u, err := startListening(*echoBin, []string{"-tools", strconv.Itoa(*walkTools), "-page-size", strconv.Itoa(*walkPage)}, nil)
		if err != nil {
			return fmt.Errorf("echoserver: %w", err)
		}
		defer be.stop()
		urls = append(urls, u)
	}
	body := fmt.Sprintf("backends:\n  - name: a\n    url: %s\n  - name: b\n    url: %s\npagination:\n  page_size: %d\n", urls[0], urls[1], *walkPage)
	const pieces = "bulkgc,gctuner,gogc"
	return eachRound(tmp, body, pick(vs, "bulkgc", "gctuner", "gogc"), func(v variant, vm *proc, url string) error {
		w := &walkTarget{name: v.name, url: url, want: 2 * (*walkTools + fixedTools), vmcp: vm}
		if err := w.connect(legacyVersion); err != nil {
			return err
		}
		defer w.cs.Close()
		t.add("walk start peak RSS MB", pieces, v.name, vm.peakRSS()*1024*1024/1e6)
		t.add("walk start vmcp CPU s", pieces, v.name, vm.cpu())
		return nil
	})
}

// tuneProgress makes one -progress-count call per variant and round, on
// the progress row's Legacy and Modern cases: time and peak RSS.
func tuneProgress(tmp string, vs []variant, t *tally) error {
	const pieces = "gctuner,gogc,scanner"
	for _, c := range progressCases[:2] {
		fmt.Printf("  progress, %s ...\n", c.name)
		args := []string{"-tools", "0"}
		if c.stateless {
			args = append(args, "-stateless")
		}
		be, beURL, err := startListening(*echoBin, args, nil)
		if err != nil {
			return err
		}
		defer be.stop()
		body := fmt.Sprintf("backends:\n  - name: echo\n    url: %s\n    timeout: %s\naggregation:\n  conflict_resolution: priority\n  priority: [echo]\n", beURL, progressTimeout)
		short := "Legacy"
		if c.version == "" {
			short = "Modern"
		}
		err = eachRound(tmp, body, pick(vs, "gctuner", "gogc", "scanner"), func(v variant, vm *proc, url string) error {
			d, err := progressCall(url, c.version)
			if err != nil {
				return err
			}
			t.add("progress "+short+" s", pieces, v.name, d.Seconds())
			t.add("progress "+short+" peak RSS MiB", pieces, v.name, vm.peakRSS())
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
