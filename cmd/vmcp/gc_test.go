package main

import (
	"bytes"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

func TestGCPercent(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		live, rate uint64
		want       int
	}{
		{8 * MiB, 0, 100},             // idle: the default
		{8 * MiB, 4 * MiB, 100},       // little garbage: under a collection/s at the default
		{8 * MiB, 12 * MiB, 150},      // 12 MiB between collections
		{8 * MiB, 400 * MiB, 200},     // capped at 16 MiB over the live heap
		{0, 400 * MiB, 1600},          // a tiny live heap counts as 1 MiB
		{128 * MiB, 400 * MiB, 100},   // big live heaps keep the default
		{1 * MiB, 100000 * MiB, 1600}, // the cap is the headroom
		{512 * 1024, 10 * MiB, 1000},  // 10 MiB between collections over 1 MiB
		{4 * MiB, 16 * MiB, 400},      // exactly the headroom
		{16 * MiB, 8 * MiB, 100},      // half the live heap: never below 100
		{16 * MiB, 1024 * MiB, 100},   // headroom equals live: 100
	} {
		if got := gcPercent(c.live, c.rate, gcHeadroom); got != c.want {
			t.Errorf("gcPercent(live %d, rate %d) = %d, want %d", c.live, c.rate, got, c.want)
		}
	}
	if got := gcPercent(2*MiB, 40*MiB, gcHeadroomFloor); got != 200 {
		t.Errorf("gcPercent with the 4 MiB floor as the cap over 2 MiB = %d, want 200", got)
	}
	if got := gcPercent(MiB, 1<<40, 256*MiB); got != gcMaxPercent {
		t.Errorf("gcPercent with a 256 MiB headroom over 1 MiB = %d, want the cap %d", got, gcMaxPercent)
	}
}

func TestHeadroomIsCappedAtAQuarterOfTheMemoryLimit(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		limit int64
		want  uint64
	}{
		{math.MaxInt64, gcHeadroom}, // no limit
		{0, gcHeadroom},
		{1024 * MiB, gcHeadroom}, // a quarter is more than the headroom
		{128 * MiB, gcHeadroom},  // exactly the headroom
		{40 * MiB, 10 * MiB},
		{32 * MiB, 8 * MiB},
	} {
		if got := limitedHeadroom(gcHeadroom, c.limit); got != c.want {
			t.Errorf("limitedHeadroom(limit %d MiB) = %d MiB, want %d MiB", c.limit/MiB, got/MiB, c.want/MiB)
		}
	}
}

// TestContainerMemoryLimitBecomesGOMEMLIMIT: a container limit (here the
// provider's 200 MiB) sets GOMEMLIMIT to 90% of it; without one, none is set.
func TestContainerMemoryLimitBecomesGOMEMLIMIT(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set in the environment, which memlimit leaves alone")
	}
	t.Setenv("AUTOMEMLIMIT", "0.9")
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	log := slog.New(slog.DiscardHandler)
	const MiB = 1 << 20
	if got := setMemoryLimit(log, memlimit.Limit(200*MiB)); got != 180*MiB || debug.SetMemoryLimit(-1) != 180*MiB {
		t.Fatalf("limit = %d, GOMEMLIMIT = %d; want 180 MiB (90%% of the container's 200 MiB)", got, debug.SetMemoryLimit(-1))
	}
	noLimit := func() (uint64, error) { return 0, memlimit.ErrNoLimit }
	if got := setMemoryLimit(log, noLimit); got != math.MaxInt64 {
		t.Fatalf("without a container limit GOMEMLIMIT = %d, want none (math.MaxInt64)", got)
	}
}

// TestBadGCSettingsAreLoggedNotSilentlyIgnored pins VMCP_GC_HEADROOM_MB
// and AUTOMEMLIMIT values that cannot be used: each is logged as a
// warning naming the variable, and the default applies.
func TestBadGCSettingsAreLoggedNotSilentlyIgnored(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set in the environment, which memlimit leaves alone")
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	t.Setenv("VMCP_GC_HEADROOM_MB", "99999999999")
	if h, on := headroomFromEnv(log); h != gcHeadroom || !on {
		t.Fatalf("headroom %d, on %v; want the default %d", h, on, gcHeadroom)
	}
	t.Setenv("VMCP_GC_HEADROOM_MB", "0")
	if _, on := headroomFromEnv(log); on {
		t.Fatal("VMCP_GC_HEADROOM_MB=0 must turn the tuner off")
	}
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	t.Setenv("AUTOMEMLIMIT", "abc")
	if got := setMemoryLimit(log, memlimit.Limit(200<<20)); got != prev {
		t.Fatalf("an invalid AUTOMEMLIMIT set GOMEMLIMIT to %d", got)
	}
	out := buf.String()
	for _, want := range []string{"level=WARN msg=\"VMCP_GC_HEADROOM_MB ignored", "level=WARN msg=\"AUTOMEMLIMIT ignored"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
