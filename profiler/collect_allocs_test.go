package profiler

import (
	"runtime"
	"testing"

	"github.com/framescope/framescope/internal/testkit/vktest"
	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// TestCollectAllocatesNothing: once the loop is warm, Collect reads a
// frame of nested zones back, converts them and hands them to the timeline
// without allocating (its slices and the recorder's are reused); so does
// Profiler.BeginFrame, which ends the frame and collects the context in the
// README's loop.
func TestCollectAllocatesNothing(t *testing.T) {
	t.Run("Collect", func(t *testing.T) { collectAllocs(t, false) })
	t.Run("Profiler.BeginFrame", func(t *testing.T) { collectAllocs(t, true) })
}

func collectAllocs(t *testing.T, boundary bool) {
	// Two measured windows: the counter is the process's, and a goroutine
	// outside the loop (the runtime's, another test's last) may allocate
	// once in one of them; an allocation of Collect's comes in both.
	const zones, warm, measured, windows = 200, 40, 20, 2
	q := vktest.Graphics(t, vk.Config{})
	// A flight recorder, as a long-running application would have.
	r := &rig{t: t, q: q, dev: &Device{d: q.Dev}, p: New(Options{WindowFrames: 4})}
	var err error
	r.g, err = r.p.GPU(r.dev, Queue{Handle: q.Q.Handle, Family: q.Q.Family, Flags: QueueFlags(q.Q.Bits), ValidBits: q.Q.ValidBits},
		GPUOptions{FramesInFlight: 1, QueriesPerFrame: 2 * (zones + 1), CalibrateEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vkg.DeviceWaitIdle(q.Dev.Handle)
		r.g.Close()
	})
	if err := r.g.Calibrate(); err != nil {
		t.Fatal(err)
	}
	outer, inner := r.p.Name("outer"), r.p.Name("inner")
	zs := make([]ZoneResult, 0, zones)
	var mallocs [windows]uint64
	var ms runtime.MemStats
	for f := 0; f < warm+windows*measured; f++ {
		w := (f - warm) / measured
		var before uint64
		if boundary {
			runtime.ReadMemStats(&ms)
			before = ms.Mallocs
		}
		r.p.BeginFrame()
		if boundary {
			runtime.ReadMemStats(&ms)
			if f >= warm {
				mallocs[w] += ms.Mallocs - before
			}
		}
		cmd := r.q.Cmd()
		r.g.BeginFrame(cmd)
		if err := r.g.Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < zones/2; i++ {
			z := r.g.Zone(cmd, outer)
			r.g.Zone(cmd, inner).End()
			z.End()
		}
		r.g.submitted([]vkg.CommandBuffer{cmd})
		r.g.EndFrame(cmd)
		r.q.SubmitWait(cmd)
		r.q.Free(cmd)
		if boundary {
			continue // the next BeginFrame ends the frame and collects
		}
		r.p.EndFrame()
		runtime.ReadMemStats(&ms)
		before = ms.Mallocs
		zs, err = r.g.Collect(zs[:0]), r.g.Err()
		runtime.ReadMemStats(&ms)
		if err != nil {
			t.Fatal(err)
		}
		if f >= warm {
			mallocs[w] += ms.Mallocs - before
		}
	}
	if err := r.g.Err(); err != nil {
		t.Fatal(err)
	}
	if min(mallocs[0], mallocs[1]) != 0 {
		t.Errorf("%v allocations in two windows of %d warm collections of %d zones, want 0 in one at least", mallocs, measured, zones)
	}
	want := zones * (warm + windows*measured - 1)
	if boundary {
		want -= zones // the last frame waits for a BeginFrame that does not come
	}
	if s := r.g.Stats(); s.Delivered < uint64(want) {
		t.Errorf("stats %+v: want every zone collected", s)
	}
}
