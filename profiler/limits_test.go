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

// Options past their limits are refused with an error naming the option
// and the limit, before anything is made: a 0xFFFFFFFF query budget used
// to wrap to a 0-query pool (SIGSEGV), a million frames in flight to make
// a million query pools.
func TestOptionsBeyondLimits(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	dev := &Device{d: q.Dev}
	gq := dev.Queues()[0]
	p := New(Options{})
	defer p.Close()
	for _, c := range []struct {
		o    GPUOptions
		want string
	}{
		{GPUOptions{MaxQueriesPerFrame: 0xFFFFFFFF}, "GPUOptions.MaxQueriesPerFrame 4294967295: at most 65536"},
		{GPUOptions{QueriesPerFrame: 0xFFFFFFFF, MaxQueriesPerFrame: 0xFFFFFFFF}, "GPUOptions.QueriesPerFrame 4294967295: at most 65536"},
		{GPUOptions{QueriesPerFrame: 1024, MaxQueriesPerFrame: 512}, "exceeds MaxQueriesPerFrame"},
		{GPUOptions{FramesInFlight: 1 << 20}, "GPUOptions.FramesInFlight 1048576: must be 1 to 16"},
		{GPUOptions{FramesInFlight: -1}, "GPUOptions.FramesInFlight -1"},
		{GPUOptions{CalibrateEvery: time.Nanosecond}, "GPUOptions.CalibrateEvery 1ns: at least 1ms"},
		{GPUOptions{calib: calibration{Burst: 1 << 30}}, "calibration burst 1073741824: at most 256"},
		{GPUOptions{calib: calibration{FallbackTimeout: time.Hour}}, "calibration fallback timeout 1h0m0s: at most 10s"},
		// The lock alone, as the docs say, is refused too (it was taken
		// without a word, and every zone was lost uncalibrated).
		{GPUOptions{FallbackLock: &sync.Mutex{}}, "GPUOptions.FallbackLock without FallbackQueue"},
	} {
		g, err := p.GPU(dev, gq, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.o, err, c.want)
		}
		if g != nil {
			g.Close()
		}
	}
	// The largest allowed budget works.
	g, err := p.GPU(dev, gq, GPUOptions{QueriesPerFrame: maxQueriesPerFrame, MaxQueriesPerFrame: maxQueriesPerFrame, FramesInFlight: maxFramesInFlight})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
}

// A Name the profiler never gave out, with DebugLabels, records a label of
// its own and grows no table: Name(1<<26) used to take 18 s and 2 GB.
func TestLabelOfUnregisteredName(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	if !q.Dev.HasLabels() {
		t.Skip("no VK_EXT_debug_utils")
	}
	p := New(Options{})
	g, err := p.GPU(&Device{d: q.Dev}, Queue{Family: q.Q.Family, Index: q.Q.Index}, GPUOptions{DebugLabels: true, FramesInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	p.BeginFrame()
	cmd := q.Cmd()
	g.BeginFrame(cmd)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []Name{1 << 26, 1<<32 - 1} {
		g.Zone(cmd, n).End()
	}
	if n := len(p.labels); n > 1 {
		t.Errorf("label table holds %d entries after two unregistered names", n)
	}
	g.EndFrame(cmd)
	p.EndFrame()
	q.SubmitWait(cmd)
	vkg.DeviceWaitIdle(q.Dev.Handle)
	p.Close()
	if d := p.Dump().Drops; d.GPUSpans != 2 {
		t.Errorf("drops %+v: want the two zones of unknown names in GPUSpans", d)
	}
}

// A closed context leaves its Profiler's list: a long-lived Profiler does
// not keep every context it ever made.
func TestClosedContextsReleased(t *testing.T) {
	q := vktest.Graphics(t, vk.Config{})
	dev := &Device{d: q.Dev}
	p := New(Options{})
	defer p.Close()
	for range 5 {
		g, err := p.GPU(dev, dev.Queues()[0], GPUOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
	}
	p.mu.Lock()
	n := len(p.gpus)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("%d closed contexts still held", n)
	}
}
