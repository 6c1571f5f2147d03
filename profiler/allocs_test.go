package profiler

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/framescope/framescope/internal/vk"
	vkg "github.com/vulkan-go/vulkan"
)

// Zone(...).End() allocates nothing, debug labels or not: two
// vkCmdWriteTimestamp (and two label commands) into a real command buffer,
// and every zone recorded comes back.
func TestZoneEndAllocatesNothing(t *testing.T) {
	for _, labels := range []bool{false, true} {
		t.Run(fmt.Sprintf("labels=%v", labels), func(t *testing.T) {
			const runs = 500
			r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 1, DebugLabels: labels,
				QueriesPerFrame: 2 * (runs + 1), MaxQueriesPerFrame: 2 * (runs + 1)})
			name := r.p.Name("z")
			var allocs float64
			zs := r.frame(func(cmd vkg.CommandBuffer) {
				allocs = testing.AllocsPerRun(runs, func() { r.g.Zone(cmd, name).End() })
			})
			if allocs != 0 {
				t.Errorf("Zone(...).End(): %v allocations, want 0", allocs)
			}
			if len(zs) != runs+1 {
				t.Errorf("%d zones back, want %d; stats %+v", len(zs), runs+1, r.g.Stats())
			}
		})
	}
}

// A command buffer recorded again every frame as a recording, as a Vulkan
// layer makes every command buffer one: its Record, zone path for C, zone,
// End, Submit and frame's end allocate nothing once warm (the copy of the
// open recordings, the zone path and the execution each allocated every
// time), however often collections come, and the execution's zones come
// back.
func TestRecordingAgainAllocatesNothing(t *testing.T) {
	const runs = 200
	r := newRig(t, vk.Config{}, GPUOptions{FramesInFlight: 2})
	name := r.p.Name("z")
	track := r.p.CPUTrack("submits")
	submit := r.p.Name("submit")
	cmd, fence := r.q.Cmd(), r.q.Fence() // begun
	var mallocs uint64
	var got int
	var zs []ZoneResult
	for i := range runs + 10 {
		if i > 0 {
			r.q.Begin(cmd)
		}
		m0 := mallocCount()
		r.p.BeginFrame()
		rec := r.g.Record(cmd)
		rec.C()
		r.g.Zone(cmd, name).End()
		rec.End()
		sp := track.Span(submit)
		r.g.Submit(sp, cmd)
		sp.End()
		r.p.EndFrame()
		if i >= 10 {
			mallocs += mallocCount() - m0
		}
		r.q.Submit(fence, cmd)
		r.q.Wait(fence)
		if i%3 != 2 {
			continue // recorded again before it is collected: handed over
		}
		zs = r.g.Collect(zs[:0])
		got += len(zs)
		// Collections that find nothing handed over, as a collector on
		// a tick makes between a slow program's frames, keep the room
		// the handovers take turns with (the second dropped it: the
		// next handover allocated its room anew, on lavapipe 41-56 us
		// of the program's vkBeginCommandBuffer).
		for range 2 {
			zs = r.g.Collect(zs[:0])
			got += len(zs)
		}
	}
	zs = r.g.Collect(zs[:0])
	got += len(zs)
	// The process's count: the calibration's goroutine allocates now and
	// then meanwhile (7 to 10 in these frames); a frame allocating once
	// would make 200 (before, it was 1,008).
	if mallocs > runs/8 {
		t.Errorf("%d allocations in %d frames, want none but the background's (at most %d)", mallocs, runs, runs/8)
	}
	if st := r.g.Stats(); got < runs || st.Issued != runs+10 || st.Drops.Total() != 0 {
		t.Errorf("%d zones back, want %d or more; stats %+v", got, runs, st)
	}
}

// mallocCount is the process's heap allocations so far.
func mallocCount() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}
