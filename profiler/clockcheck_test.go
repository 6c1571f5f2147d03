package profiler

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
)

func TestClockCheckCausality(t *testing.T) {
	for _, mode := range []string{"calibrated", "fallback", "raw"} {
		fallback := mode == "fallback"
		clock := ClockMonotonic
		if mode == "raw" {
			clock = ClockMonotonicRaw
		}
		t.Run(mode, func(t *testing.T) {
			q := vktest.Graphics(t, vk.Config{NoCalibrated: fallback})
			if !fallback && q.Dev.Calibrated == "" {
				t.Skipf("%s has no calibrated timestamps", q.Dev.Caps.Name)
			}
			rep, err := ClockCheck(&Device{q.Dev}, Queue{Handle: q.Q.Handle, Family: q.Q.Family, ValidBits: q.Q.ValidBits},
				ClockCheckOptions{Duration: 3 * time.Second, SampleEvery: 5 * time.Millisecond,
					FitEvery: 200 * time.Millisecond, CausalityEvery: time.Millisecond, CausalityTries: 100, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			rep.Print(&buf)
			t.Log("\n" + buf.String())
			if rep.CausalityTries != 100 {
				t.Errorf("%d causality tries, want 100", rep.CausalityTries)
			}
			if rep.CausalityViolations != 0 {
				t.Errorf("%d causality violations", rep.CausalityViolations)
			}
			if !strings.Contains(buf.String(), "causality violations: 0") {
				t.Error("report lacks the causality line")
			}
			if mode == "raw" && rep.Clock != "CLOCK_MONOTONIC_RAW" {
				t.Errorf("clock %q, want CLOCK_MONOTONIC_RAW", rep.Clock)
			}
			// Without the host clock's time domain (lavapipe has no
			// CLOCK_MONOTONIC_RAW) the check falls back to submit-and-wait.
			caps := q.Dev.Caps
			want := "submit-and-wait"
			if !fallback && caps.HasTimeDomain(vk.TimeDomainDevice) && caps.HasTimeDomain(clock.domain()) {
				want = q.Dev.Calibrated
			}
			t.Logf("method %s (time domains %v)", rep.Method, caps.TimeDomains)
			if rep.Method != want {
				t.Errorf("method %q, want %q", rep.Method, want)
			}
			if rep.OutsideBound != 0 {
				t.Errorf("%d held-out samples outside the model's stated bound", rep.OutsideBound)
			}
			if rep.Residual.Count == 0 || rep.Fits < 2 {
				t.Errorf("residuals %d, fits %d", rep.Residual.Count, rep.Fits)
			}
		})
	}
}

// Calibrated timestamps against CLOCK_MONOTONIC_RAW, where the device has
// that time domain (NVIDIA does; lavapipe does not, and
// TestClockCheckCausality/raw then runs submit-and-wait).
func TestClockCheckRawCalibrated(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	caps := q.Dev.Caps
	if q.Dev.Calibrated == "" || !caps.HasTimeDomain(vk.TimeDomainDevice) || !caps.HasTimeDomain(vk.TimeDomainClockMonotonicRaw) {
		t.Skipf("%s offers no calibrated timestamps with the DEVICE and CLOCK_MONOTONIC_RAW time domains (extension %q, domains %v): the raw extension path is not exercised here",
			caps.Name, q.Dev.Calibrated, caps.TimeDomains)
	}
	rep, err := ClockCheck(&Device{q.Dev}, Queue{Handle: q.Q.Handle, Family: q.Q.Family, ValidBits: q.Q.ValidBits},
		ClockCheckOptions{Duration: 2 * time.Second, SampleEvery: 5 * time.Millisecond,
			FitEvery: 200 * time.Millisecond, CausalityEvery: time.Millisecond, CausalityTries: 50, Clock: ClockMonotonicRaw})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	t.Log("\n" + buf.String())
	if rep.Method != q.Dev.Calibrated || rep.Clock != "CLOCK_MONOTONIC_RAW" {
		t.Errorf("method %q against %s, want %q against CLOCK_MONOTONIC_RAW", rep.Method, rep.Clock, q.Dev.Calibrated)
	}
	if rep.CausalityTries != 50 || rep.CausalityViolations != 0 {
		t.Errorf("%d causality violations in %d tries", rep.CausalityViolations, rep.CausalityTries)
	}
	if rep.OutsideBound != 0 || rep.Residual.Count == 0 || rep.Fits < 2 {
		t.Errorf("%d of %d held-out samples outside the bound, %d fits", rep.OutsideBound, rep.Residual.Count, rep.Fits)
	}
	// The GPU context itself samples with the extension on that clock.
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, Calibration: CalibrationOptions{Clock: ClockMonotonicRaw, Interval: -1}})
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
		Calibration: CalibrationOptions{Clock: ClockMonotonicRaw, Interval: -1}})
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
