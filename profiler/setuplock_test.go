package profiler

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// An application that holds its queue lock while it sets up (Gio does,
// in its device set-up) makes a context with FallbackQueue and that lock:
// GPU returns without taking it, the first calibration comes from the
// context's goroutine once the lock is let go, and the zones of the
// frames recorded meanwhile wait for it and convert: none is counted
// uncalibrated.
func TestGPUDoesNotWaitForFallbackLock(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{NoCalibrated: true})
	fq := &Queue{Handle: q.Q.Handle, Family: q.Q.Family, Flags: QueueFlags(q.Q.Bits), ValidBits: q.Q.ValidBits}
	p := New(Options{})
	var lock sync.Mutex
	lock.Lock() // the application's set-up holds it
	made := make(chan *GPU, 1)
	go func() {
		g, err := p.GPU(&Device{d: q.Dev}, *fq, GPUOptions{FramesInFlight: 1, FallbackQueue: fq, FallbackLock: &lock})
		if err != nil {
			t.Error(err)
		}
		made <- g
	}()
	var g *GPU
	select {
	case g = <-made:
	case <-time.After(5 * time.Second):
		t.Fatal("Profiler.GPU still blocked after 5s on the application's FallbackLock")
	}
	if g == nil {
		t.FailNow()
	}
	t.Cleanup(func() {
		vkg.DeviceWaitIdle(q.Dev.Handle)
		g.Close()
	})
	name := p.Name("z")
	zones := 0
	frame := func() {
		p.BeginFrame()
		cmd := q.Cmd()
		g.BeginFrame(cmd)
		g.Zone(cmd, name).End()
		zones++
		g.submitted([]vkg.CommandBuffer{cmd})
		g.EndFrame(cmd)
		p.EndFrame()
		q.SubmitWait(cmd) // the application's own submission, under its lock
		q.Free(cmd)
	}
	// Still setting up: the lock held, the frames submitted under it. More
	// frames than the context has query slots: Collect reads them back to
	// convert after the first calibration, so none is refused.
	for range 8 {
		frame()
		g.Collect(nil)
	}
	if st := g.Stats(); st.Calibrations != 0 || st.Drops.Uncalibrated != 0 {
		t.Fatalf("with the lock held: %d calibrations, %d zones uncalibrated", st.Calibrations, st.Drops.Uncalibrated)
	}
	lock.Unlock()
	waitCalibrations(t, g, 1)
	lock.Lock()
	frame()
	lock.Unlock()
	zs, err := g.Drain(nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := g.Stats(); len(zs) != zones || st.Drops.Total() != 0 || st.Delivered != uint64(zones) {
		t.Errorf("%d zones recorded; Drain gave %d, stats %+v", zones, len(zs), st)
	}
}

// A failed calibration keeps its reason: Stats.LastCalibrationError has
// the error of the latest failed round, which GPU.Calibrate returned.
func TestCalibrationErrorKeepsReason(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, CalibrateEvery: -1})
	if st := r.g.Stats(); st.LastCalibrationError != "" {
		t.Fatalf("a reason before any failure: %q", st.LastCalibrationError)
	}
	if !r.g.cal.useExt {
		t.Skip("the device has no calibrated timestamps")
	}
	r.g.cal.mu.Lock()
	r.g.cal.calibrated = func([]vk.TimeDomain, []uint64) (uint64, error) {
		return 0, vkg.Error(vkg.ErrorDeviceLost)
	}
	r.g.cal.mu.Unlock()
	err := r.g.Calibrate()
	if err == nil {
		t.Fatal("a failing vkGetCalibratedTimestamps calibrated")
	}
	st := r.g.Stats()
	if st.CalibrationErrors != 1 || st.LastCalibrationError != err.Error() || !strings.Contains(st.LastCalibrationError, "lost") {
		t.Errorf("after %q: %d errors, reason %q", err, st.CalibrationErrors, st.LastCalibrationError)
	}
}
