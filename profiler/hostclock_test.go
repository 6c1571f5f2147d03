package profiler

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
)

// A context on CLOCK_MONOTONIC_RAW samples with calibrated timestamps on
// that clock where the device has its time domain (NVIDIA does; lavapipe
// does not).
func TestRawClockContextUsesTheExtension(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	caps := q.Dev.Caps
	if q.Dev.Calibrated == "" || !caps.HasTimeDomain(vk.TimeDomainDevice) || !caps.HasTimeDomain(vk.TimeDomainClockMonotonicRaw) {
		t.Skipf("%s offers no calibrated timestamps with the DEVICE and CLOCK_MONOTONIC_RAW time domains", caps.Name)
	}
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, Clock: ClockMonotonicRaw, CalibrateEvery: -1})
	if !r.g.cal.useExt || r.g.cal.doms[1] != vk.TimeDomainClockMonotonicRaw {
		t.Errorf("context on CLOCK_MONOTONIC_RAW: extension used %v, domains %v", r.g.cal.useExt, r.g.cal.doms)
	}
}

// The fallback path end to end: no calibrated timestamps, the application
// calibrates by submit-and-wait, and zones still land on the host clock.
func TestFallbackCalibrationConvertsZones(t *testing.T) {
	r := newRig(t, vk.Config{NoCalibrated: true}, GPUOptions{FramesInFlight: 1})
	name := r.p.Name("z")
	// Before any calibration, zones are read back but not placed: counted.
	// Collect says so.
	zs, err := r.frameErr(func(cmd vkgCmd) { r.g.Zone(cmd, name).End() })
	if len(zs) != 1 || zs[0].Converted || r.g.Stats().Drops.Uncalibrated != 1 {
		t.Fatalf("before calibration: %+v, stats %+v", zs, r.g.Stats())
	}
	if !errors.Is(err, ErrNoCalibration) || !strings.Contains(err.Error(), "1 zones") {
		t.Errorf("Collect of unconverted zones: %v, want ErrNoCalibration naming 1 zone", err)
	}
	for i := 0; i < 5; i++ {
		if err := r.g.Calibrate(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := timeTimeline()
	zs = r.frame(func(cmd vkgCmd) { r.g.Zone(cmd, name).End() })
	after := timeTimeline()
	if len(zs) != 1 || !zs[0].Converted {
		t.Fatalf("after calibration: %+v", zs)
	}
	z := zs[0]
	if z.Start+z.ErrNs < before || z.Stop-z.ErrNs > after {
		t.Errorf("zone [%d, %d] ± %d outside the frame's host interval [%d, %d]", z.Start, z.Stop, z.ErrNs, before, after)
	}
	if got := r.p.Dump().Drops.Uncalibrated; got != 1 {
		t.Errorf("timeline Drops.Uncalibrated = %d, want 1", got)
	}
}

// A context on CLOCK_MONOTONIC_RAW returns its zones on that clock and
// keeps them out of the timeline, whose CPU spans are on CLOCK_MONOTONIC.
func TestRawClockZonesStayOutOfTheTimeline(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1,
		Clock: ClockMonotonicRaw, CalibrateEvery: -1})
	if err := r.g.Calibrate(); err != nil {
		t.Fatal(err)
	}
	before := ClockMonotonicRaw.now()
	zs := r.frame(func(cmd vkgCmd) { r.g.Zone(cmd, r.p.Name("z")).End() })
	after := ClockMonotonicRaw.now()
	if len(zs) != 1 || !zs[0].Converted {
		t.Fatalf("zones %+v", zs)
	}
	if z := zs[0]; z.Start+z.ErrNs < before || z.Stop-z.ErrNs > after {
		t.Errorf("zone [%d, %d] ± %d outside the frame's CLOCK_MONOTONIC_RAW interval [%d, %d]", z.Start, z.Stop, z.ErrNs, before, after)
	}
	for _, s := range r.p.Dump().Spans {
		if s.Track == r.g.Track() {
			t.Fatalf("a CLOCK_MONOTONIC_RAW zone went into the timeline: %+v", s)
		}
	}
}
