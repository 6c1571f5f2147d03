package profiler

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/leakcheck"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// liveContext makes a GPU context on d's graphics queue with background
// calibration every millisecond and debug labels, records a frame with a
// zone ended and one left open, submits it and waits until the calibrator
// has run a few rounds. The caller closes the device next.
func liveContext(t *testing.T, d *vk.Device, dev *Device, tq *vktest.Queue, fallback bool) (*Profiler, *GPU, Zone, Name) {
	t.Helper()
	q := Queue{Handle: tq.Q.Handle, Family: tq.Q.Family, Flags: QueueFlags(tq.Q.Bits), ValidBits: tq.Q.ValidBits}
	o := GPUOptions{FramesInFlight: 2, DebugLabels: d.HasLabels(), CalibrateEvery: time.Millisecond}
	if fallback {
		o.FallbackQueue = &q // the calibrator submits from its goroutine, under the lock
		tq.Lock = new(sync.Mutex)
		o.FallbackLock = tq.Lock
	}
	p := New(Options{})
	name := p.Name("live")
	g, err := p.GPU(dev, q, o)
	if err != nil {
		t.Fatal(err)
	}
	p.BeginFrame()
	cmd := tq.Cmd()
	g.BeginFrame(cmd)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	g.Zone(cmd, name).End()
	open := g.Zone(cmd, name) // never ended before the device goes
	if !open.Valid() {
		t.Fatal("zone refused")
	}
	g.EndFrame(cmd)
	p.EndFrame()
	if !fallback {
		tq.SubmitWait(cmd)
	}
	// The background calibrator is running: wait for a few of its rounds.
	for deadline := time.Now().Add(time.Minute); g.Stats().Calibrations < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("no background calibration: %+v", g.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	return p, g, open, name
}

// afterClose calls every method of a context whose device was closed:
// errors, counts, no Vulkan call (the device is gone: a call would crash),
// no allocation on the zone path.
func afterClose(t *testing.T, p *Profiler, dev *Device, g *GPU, open Zone, name Name) {
	t.Helper()
	g.BeginFrame(nil)
	if err := g.Err(); !errors.Is(err, ErrDeviceClosed) || !errors.Is(err, ErrClosed) {
		t.Errorf("BeginFrame: %v, want ErrDeviceClosed (which is an ErrClosed)", err)
	}
	if _, err := g.Collect(nil), g.Err(); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("Collect: %v", err)
	}
	if _, err := g.Drain(nil); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("Drain: %v", err)
	}
	if err := g.Calibrate(); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("Calibrate: %v", err)
	}
	before := g.Stats()
	// The command buffer is freed and the device destroyed: a zone that
	// wrote a timestamp or a label would crash here.
	if z := g.Zone(vkg.CommandBuffer(nil), name); z.Valid() {
		t.Error("Zone accepted")
	} else {
		z.End()
	}
	open.End()
	open.EndIn(nil)
	g.EndFrame(nil)
	g.submitted([]vkg.CommandBuffer{nil})
	st := g.Stats()
	if st.Drops.Closed != before.Drops.Closed+1 || st.Drops.Misuse != before.Drops.Misuse+2 {
		t.Errorf("stats %+v after %+v: want Closed +1 (the refused zone), Misuse +2 (the zone open at close, ended twice)", st, before)
	}
	if n := testing.AllocsPerRun(100, func() { g.Zone(nil, name).End() }); n != 0 {
		t.Errorf("Zone/End on a closed context: %v allocations", n)
	}
	if got := g.Stats().Drops.Closed; got != st.Drops.Closed+101 {
		t.Errorf("Closed %d, want %d", got, st.Drops.Closed+101)
	}
	if c := g.Stats().Calibrations; c != st.Calibrations {
		t.Errorf("calibrations went on after the device closed: %d, then %d", st.Calibrations, c)
	}
	g.Close()
	g.BeginFrame(nil)
	if err := g.Err(); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("BeginFrame after GPU.Close: %v", err)
	}
	if _, err := p.GPU(dev, dev.Queues()[0], GPUOptions{}); !errors.Is(err, ErrDeviceClosed) {
		t.Errorf("GPU on a closed device: %v", err)
	}
	dev.Close()
	if err := p.Close(); err != nil {
		t.Errorf("Profiler.Close: %v", err)
	}
}

// Closing a device under a live GPU context closes the context first:
// calibration stops, the query pools go while the device exists, and every
// later call returns ErrDeviceClosed or is refused and counted.
func TestDeviceClosedUnderLiveContext(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      vk.Config
		fallback bool // submit-and-wait calibration in the background
		viaVK    bool // close the vk.Device, as its owner would
	}{
		{"calibrated", vk.Config{}, false, false},
		{"fallback", vk.Config{NoCalibrated: true}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := vktest.Open(t, c.cfg)
			leakcheck.Check(t, 2*time.Second)
			if !c.fallback && d.Calibrated == "" {
				t.Skipf("%s has no calibrated timestamps", d.Caps.Name)
			}
			qv, _ := d.QueueFor("graphics")
			tq := vktest.NewQueue(t, d, qv)
			dev := &Device{d: d}
			p, g, open, name := liveContext(t, d, dev, tq, c.fallback)
			tq.Destroy() // the test's own objects go first
			if c.viaVK {
				d.Close()
			} else {
				dev.Close()
			}
			afterClose(t, p, dev, g, open, name)
		})
	}
}

// A Device from WrapDevice closes its contexts and leaves the
// application's device alive.
func TestWrappedDeviceCloseKeepsTheDevice(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	leakcheck.Check(t, 2*time.Second)
	qv, _ := d.QueueFor("graphics")
	tq := vktest.NewQueue(t, d, qv)
	dev, err := WrapDevice(Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, Queues: queueIDs(d),
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", DebugUtils: d.Instance.DebugUtils, APIVersion: d.Instance.APIVersion})
	if err != nil {
		t.Fatal(err)
	}
	p, g, open, name := liveContext(t, d, dev, tq, d.Calibrated == "")
	dev.Close()
	if d.Closed() {
		t.Fatal("closing the wrapped Device closed the application's")
	}
	if r := vkg.DeviceWaitIdle(d.Handle); r != vkg.Success {
		t.Fatalf("the application's device after closing the wrapper: %v", vkg.Error(r))
	}
	tq.SubmitWait(tq.Cmd()) // still usable
	afterClose(t, p, dev, g, open, name)
}
