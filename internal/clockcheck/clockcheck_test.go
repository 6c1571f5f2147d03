package clockcheck

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/profiler"
	vkg "github.com/vulkan-go/vulkan"
)

// wrap hands q's device to the profiler as an application's would be.
func wrap(t *testing.T, q *vktest.Queue) *profiler.Device {
	t.Helper()
	d := q.Dev
	ids := make([]profiler.QueueID, len(d.Queues))
	for i, x := range d.Queues {
		ids[i] = profiler.QueueID{Family: x.Family, Index: x.Index}
	}
	dev, err := profiler.WrapDevice(profiler.Existing{
		Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, Queues: ids,
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", APIVersion: d.Instance.APIVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vkg.DeviceWaitIdle(d.Handle)
		dev.Close()
	})
	return dev
}

func TestClockCheckCausality(t *testing.T) {
	for _, mode := range []string{"calibrated", "fallback", "raw"} {
		fallback := mode == "fallback"
		hc := profiler.ClockMonotonic
		if mode == "raw" {
			hc = profiler.ClockMonotonicRaw
		}
		t.Run(mode, func(t *testing.T) {
			q := vktest.Graphics(t, vk.Config{NoCalibrated: fallback})
			if !fallback && q.Dev.Calibrated == "" {
				t.Skipf("%s has no calibrated timestamps", q.Dev.Caps.Name)
			}
			rep, err := Run(wrap(t, q), profiler.Queue{Handle: q.Q.Handle, Family: q.Q.Family, ValidBits: q.Q.ValidBits},
				Options{Duration: 3 * time.Second, SampleEvery: 5 * time.Millisecond,
					FitEvery: 200 * time.Millisecond, CausalityEvery: time.Millisecond, CausalityTries: 100, Clock: hc})
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
			domain := vk.TimeDomainClockMonotonic
			if mode == "raw" {
				domain = vk.TimeDomainClockMonotonicRaw
			}
			want := "submit-and-wait"
			if !fallback && caps.HasTimeDomain(vk.TimeDomainDevice) && caps.HasTimeDomain(domain) {
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
	rep, err := Run(wrap(t, q), profiler.Queue{Handle: q.Q.Handle, Family: q.Q.Family, ValidBits: q.Q.ValidBits},
		Options{Duration: 2 * time.Second, SampleEvery: 5 * time.Millisecond,
			FitEvery: 200 * time.Millisecond, CausalityEvery: time.Millisecond, CausalityTries: 50, Clock: profiler.ClockMonotonicRaw})
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
}
