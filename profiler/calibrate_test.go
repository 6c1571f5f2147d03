package profiler

import (
	"errors"
	vkg "github.com/vulkan-go/vulkan"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	"github.com/framescope/framescope/timeline"
)

// scripted wraps a calibrator's vkGetCalibratedTimestamps: each call runs
// the real one, then takes the next scripted maxDeviation (0: the real
// one) or error, and sleeps for delay. It records what every call returned.
type scripted struct {
	real   func([]vk.TimeDomain, []uint64) (uint64, error)
	devs   []uint64
	errAt  map[int]error
	delay  time.Duration
	calls  int
	values [][2]uint64 // device, host of each call
}

func (s *scripted) call(doms []vk.TimeDomain, ts []uint64) (uint64, error) {
	i := s.calls
	s.calls++
	dev, err := s.real(doms, ts)
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	if e := s.errAt[i]; e != nil {
		return 0, e
	}
	if err != nil {
		return 0, err
	}
	s.values = append(s.values, [2]uint64{ts[0], ts[1]})
	if i < len(s.devs) && s.devs[i] != 0 {
		dev = s.devs[i]
	}
	return dev, nil
}

// extRig is a context that calibrates with the extension and no
// background rounds, its calibrated-timestamps call wrapped by s.
func extRig(t *testing.T, o calibration, s *scripted) *rig {
	t.Helper()
	o.Interval = -1
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, calib: o})
	if !r.g.cal.useExt {
		t.Skipf("%s has no calibrated timestamps with the DEVICE and CLOCK_MONOTONIC domains", r.q.Dev.Caps.Name)
	}
	s.real = r.g.cal.calibrated
	r.g.cal.calibrated = s.call
	return r
}

func TestCalibrationRoundStopsAtBurst(t *testing.T) {
	s := &scripted{}
	r := extRig(t, calibration{Burst: 3, Budget: time.Minute}, s)
	before := r.g.Stats().Calibrations
	for round := 1; round <= 2; round++ {
		if err := r.g.Calibrate(); err != nil {
			t.Fatal(err)
		}
		if s.calls != 3*round {
			t.Errorf("after round %d: %d calls, want %d (Burst 3 each)", round, s.calls, 3*round)
		}
	}
	if got := r.g.Stats().Calibrations - before; got != 2 {
		t.Errorf("%d calibrations counted, want 2", got)
	}
}

// Each call takes at least 100 µs, so a 300 µs budget is spent after the
// third or fourth: however loaded the machine, no fifth call may start.
func TestCalibrationRoundStopsAtBudget(t *testing.T) {
	s := &scripted{delay: 100 * time.Microsecond}
	r := extRig(t, calibration{Burst: 100, Budget: 300 * time.Microsecond}, s)
	if err := r.g.Calibrate(); err != nil {
		t.Fatal(err)
	}
	if s.calls < 1 || s.calls > 4 {
		t.Errorf("%d calls in a round with a 300 µs budget and 100 µs calls, want 1 to 4", s.calls)
	}
}

func TestCalibrationRoundKeepsSmallestDeviation(t *testing.T) {
	s := &scripted{devs: []uint64{5000, 3000, 700, 900, 700}}
	r := extRig(t, calibration{Burst: 5, Budget: time.Minute}, s)
	c := r.g.cal
	c.mu.Lock()
	got, err := c.sampleExt()
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if s.calls != 5 {
		t.Fatalf("%d calls, want 5", s.calls)
	}
	want := s.values[2] // the first with 700
	if got.Deviation != 700 || got.Device != want[0] || got.Host != int64(want[1]) {
		t.Errorf("kept %+v, want the third call's sample (device %d, host %d, deviation 700)", got, want[0], want[1])
	}
}

func TestCalibrationRoundErrors(t *testing.T) {
	boom := errors.New("device lost")
	t.Run("first call fails", func(t *testing.T) {
		s := &scripted{errAt: map[int]error{0: boom}}
		r := extRig(t, calibration{Burst: 4, Budget: time.Minute}, s)
		st := r.g.Stats()
		if err := r.g.Calibrate(); !errors.Is(err, boom) {
			t.Errorf("Calibrate: %v, want %v", err, boom)
		}
		if s.calls != 1 {
			t.Errorf("%d calls after the first failed, want 1", s.calls)
		}
		after := r.g.Stats()
		if after.Calibrations != st.Calibrations || after.CalibrationErrors != st.CalibrationErrors+1 {
			t.Errorf("stats %+v -> %+v, want one more error and no more calibrations", st, after)
		}
	})
	t.Run("later call fails", func(t *testing.T) {
		s := &scripted{devs: []uint64{3000, 800, 600}, errAt: map[int]error{2: boom}}
		r := extRig(t, calibration{Burst: 5, Budget: time.Minute}, s)
		c := r.g.cal
		c.mu.Lock()
		got, err := c.sampleExt()
		c.mu.Unlock()
		if err != nil {
			t.Fatalf("sampleExt: %v, want the best sample before the error", err)
		}
		if s.calls != 3 {
			t.Errorf("%d calls, want 3: none after the error", s.calls)
		}
		want := s.values[1]
		if got.Deviation != 800 || got.Device != want[0] || got.Host != int64(want[1]) {
			t.Errorf("kept %+v, want the second call's sample (device %d, host %d, deviation 800)", got, want[0], want[1])
		}
	})
}

func TestNextCalibration(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ age, interval, want time.Duration }{
		{0, time.Second, 20 * ms},
		{500 * ms, time.Second, 20 * ms},
		{999 * ms, time.Second, 20 * ms},
		{time.Second, time.Second, time.Second},
		{time.Hour, time.Second, time.Second},
		{0, 10 * time.Second, 20 * ms},
		{9 * time.Second, 10 * time.Second, 20 * ms},
		{10 * time.Second, 10 * time.Second, 10 * time.Second},
		{30 * ms, 50 * ms, 20 * ms},
		{50 * ms, 50 * ms, 50 * ms},
		{0, 20 * ms, 20 * ms}, // no warm-up at or below warmupEvery
		{0, 5 * ms, 5 * ms},
	} {
		if got := nextCalibration(c.age, c.interval); got != c.want {
			t.Errorf("nextCalibration(%v, %v) = %v, want %v", c.age, c.interval, got, c.want)
		}
	}
}

// The background loop calibrates on its own: the count grows. Polled with a
// generous deadline; no timing is asserted.
func TestBackgroundCalibration(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, CalibrateEvery: 50 * time.Millisecond})
	if !r.g.cal.useExt {
		t.Skipf("%s has no calibrated timestamps with the DEVICE and CLOCK_MONOTONIC domains", r.q.Dev.Caps.Name)
	}
	waitCalibrations(t, r.g, 5)
	q := r.g.Clock().Quality()
	if q.Samples < 2 || !(q.ErrNs > 0) {
		t.Errorf("clock quality after background rounds: %+v", q)
	}
}

// waitCalibrations polls g until it counts n calibrations, for at most a
// minute.
func waitCalibrations(t *testing.T, g *GPU, n uint64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for g.Stats().Calibrations < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calibrations after a minute, want %d; stats %+v", g.Stats().Calibrations, n, g.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The fallback in the background: no calibrated timestamps, a queue the
// calibrator submits to from its own goroutine every Interval, and zones
// land on the host clock. Lavapipe has one queue, shared here with the
// test's frame: the test holds the calibrator's round lock while it
// submits, the external synchronization Vulkan requires of a queue.
func TestBackgroundFallbackCalibration(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{NoCalibrated: true})
	fq := &Queue{Handle: q.Q.Handle, Family: q.Q.Family, Flags: QueueFlags(q.Q.Bits), ValidBits: q.Q.ValidBits}
	p := New(Options{})
	var submits sync.Mutex // held around the test's own submissions to the queue
	g, err := p.GPU(&Device{d: q.Dev}, *fq, GPUOptions{FramesInFlight: 1,
		FallbackQueue: fq, FallbackLock: &submits, CalibrateEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	if g.cal.useExt {
		t.Fatal("calibrated timestamps in use with the extension left off")
	}
	waitCalibrations(t, g, 5)
	if s := g.Clock().Quality(); s.Samples < 2 {
		t.Errorf("clock quality after background rounds: %+v", s)
	}

	name := p.Name("z")
	p.BeginFrame()
	cmd := q.Cmd()
	g.BeginFrame(cmd)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	g.Zone(cmd, name).End()
	g.submitted([]vkg.CommandBuffer{cmd})
	g.EndFrame(cmd)
	p.EndFrame()
	before := timeTimeline()
	submits.Lock()
	q.SubmitWait(cmd)
	submits.Unlock()
	after := timeTimeline()
	q.Free(cmd)
	zs, err := g.Drain(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(zs) != 1 || !zs[0].Converted {
		t.Fatalf("zones %+v, stats %+v", zs, g.Stats())
	}
	if z := zs[0]; z.Start+z.ErrNs < before || z.Stop-z.ErrNs > after {
		t.Errorf("zone [%d, %d] ± %d outside the submission's host interval [%d, %d]", z.Start, z.Stop, z.ErrNs, before, after)
	}
	if n := g.Stats().Drops.Uncalibrated; n != 0 {
		t.Errorf("%d zones unconverted", n)
	}
}

// The clock's quality travels with the data: after a calibration and a
// frame, the timeline holds a Calibration record for the queue's track
// with the model's error bound, and a new one after the next round.
func TestCalibrationRecordsInDump(t *testing.T) {
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, CalibrateEvery: -1})
	name := r.p.Name("z")
	var seen []timeline.Calibration
	for round := 1; round <= 2; round++ {
		if err := r.g.Calibrate(); err != nil {
			t.Fatal(err)
		}
		q := r.g.Clock().Quality()
		r.frame(func(cmd vkgCmd) { r.g.Zone(cmd, name).End() })
		seen = seen[:0]
		for _, c := range r.p.Dump().Calibrations {
			if c.Track == r.g.Track() {
				seen = append(seen, c)
			}
		}
		if len(seen) == 0 {
			t.Fatalf("round %d: no calibration record for track %d in the dump", round, r.g.Track())
		}
		c := seen[len(seen)-1]
		if !(c.ErrNs > 0) || c.ErrNs != q.ErrNs || c.Time != q.LastHost || c.Samples != q.Samples || c.DriftPPM != q.DriftPPM {
			t.Errorf("round %d: newest record %+v, want the model's quality %+v", round, c, q)
		}
	}
	if len(seen) < 2 || seen[len(seen)-1].Time == seen[0].Time {
		t.Errorf("records after two rounds: %+v, want one per refit", seen)
	}
}
