package profiler

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framescope/framescope/internal/testkit/leakcheck"
	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
)

// closeWatch wraps every calibrator's vkGetCalibratedTimestamps, through
// testHookRound, and counts the calls that come after Device.Close
// returned: on an application's device, destroyed right after, each would
// be a call into freed memory (the SIGSEGV an outside test saw once in
// fifteen runs).
type closeWatch struct {
	closed  atomic.Bool   // Device.Close returned
	late    atomic.Int64  // calls after that
	calls   atomic.Int64  // all calls
	holding atomic.Bool   // rounds wait in the hook for the close
	inRound chan struct{} // a round is waiting in the hook
	done    chan struct{} // closed when Device.Close returned
}

func watchCloses(t *testing.T) *closeWatch {
	w := &closeWatch{inRound: make(chan struct{}, 1), done: make(chan struct{})}
	testHookRound = func(c *calibrator) {
		if w.holding.Load() {
			select {
			case w.inRound <- struct{}{}:
			default:
			}
			// Wait for the device's Close to return, but not forever: a
			// Close that waits for this round must get it.
			select {
			case <-w.done:
			case <-time.After(150 * time.Millisecond):
			}
		}
		if real := c.calibrated; real != nil {
			c.calibrated = func(d []vk.TimeDomain, ts []uint64) (uint64, error) {
				w.calls.Add(1)
				if w.closed.Load() {
					w.late.Add(1)
					return 0, vk.ErrDeviceClosed // do not call a closed device for real
				}
				return real(d, ts)
			}
		}
	}
	t.Cleanup(func() { testHookRound = nil })
	return w
}

func (w *closeWatch) closeDevice(dev *Device) {
	dev.Close()
	w.closed.Store(true)
	close(w.done)
}

func wrapForTest(t *testing.T, d *vk.Device) *Device {
	t.Helper()
	dev, err := WrapDevice(Existing{Instance: d.Instance.Handle, Physical: d.Physical, Device: d.Handle, Queues: queueIDs(d),
		HostQueryReset: d.HostQueryReset, CalibratedTimestamps: d.Calibrated != "", APIVersion: d.Instance.APIVersion})
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// The calibrator never calls into a device after its Close returned:
// neither the first round of a context made while the device closes, nor
// the background rounds of a context closed (GPU.Close) while the device
// closes on another goroutine. Both orders are forced with the hook, so
// that the test fails on every run where the library has the fault.
func TestNoCalibrationAfterDeviceClose(t *testing.T) {
	d := vktest.Open(t, vk.Config{})
	if d.Calibrated == "" {
		t.Skipf("%s has no calibrated timestamps", d.Caps.Name)
	}
	leakcheck.Check(t, 2*time.Second)
	q := func(dev *Device) Queue { qs := dev.Queues(); return qs[0] }
	t.Run("context made while the device closes", func(t *testing.T) {
		for i := range 5 {
			w := watchCloses(t)
			dev := wrapForTest(t, d)
			p := New(Options{})
			w.holding.Store(true)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, err := p.GPU(dev, q(dev), GPUOptions{CalibrateEvery: time.Millisecond})
				if err == nil {
					g.Close()
				}
			}()
			<-w.inRound // the context's first round
			w.closeDevice(dev)
			wg.Wait()
			p.Close()
			if n := w.late.Load(); n > 0 {
				t.Fatalf("run %d: %d calibration calls after Device.Close returned (of %d)", i, n, w.calls.Load())
			}
		}
	})
	t.Run("GPU.Close while the device closes", func(t *testing.T) {
		for i := range 5 {
			w := watchCloses(t)
			dev := wrapForTest(t, d)
			p := New(Options{})
			g, err := p.GPU(dev, q(dev), GPUOptions{CalibrateEvery: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			w.holding.Store(true)
			<-w.inRound // a background round, held in the hook
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); g.Close() }()
			time.Sleep(10 * time.Millisecond) // GPU.Close is under way
			w.closeDevice(dev)
			wg.Wait()
			p.Close()
			if n := w.late.Load(); n > 0 {
				t.Fatalf("run %d: %d calibration calls after Device.Close returned (of %d)", i, n, w.calls.Load())
			}
		}
	})
}
