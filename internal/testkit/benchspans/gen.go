package benchspans

import (
	"math/rand/v2"

	"github.com/framescope/framescope/timeline"
)

// Names are the 50 span names the generator uses (Names[0] is the empty
// name every timeline starts with).
var Names = []string{"",
	"frame", "update", "physics step", "animation", "ai tick", "audio mix", "input poll", "scene cull",
	"build draw lists", "record shadow pass", "record gbuffer pass", "record lighting", "record post",
	"vkQueueSubmit", "vkQueuePresentKHR", "vkAcquireNextImageKHR", "vkWaitForFences", "upload buffers",
	"descriptor update", "pipeline bind", "job: skinning", "job: particles", "job: culling",
	"job: streaming", "job: decompress", "shadow pass", "cascade 0", "cascade 1", "cascade 2",
	"gbuffer pass", "opaque draws", "alpha test draws", "lighting pass", "tiled light cull",
	"ssao", "ssr", "volumetrics", "transparent pass", "particles draw", "post process", "bloom",
	"tonemap", "taa resolve", "ui pass", "present blit", "async compute: bvh refit",
	"async compute: fluid", "copy: texture upload", "timestamp calibration", "readback",
}

// Track IDs of the generated timeline.
const (
	FramesTrack timeline.TrackID = iota + 1
	MainTrack
	WorkerTrack
	GraphicsQueue
	GraphicsLane
	ComputeQueue
	CPUTimeCounter
)

var nvidia = timeline.Queue{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics+compute+transfer"}
var compute = timeline.Queue{Device: "NVIDIA H200", Family: 2, Index: 0, Flags: "compute"}

// Tracks returns the tracks of the generated timeline.
func Tracks() []timeline.Track {
	return []timeline.Track{
		{ID: FramesTrack, Kind: timeline.TrackFrames, Name: "Frames", Order: -1},
		{ID: MainTrack, Kind: timeline.TrackCPU, Name: "main", Order: 0},
		{ID: WorkerTrack, Kind: timeline.TrackCPU, Name: "worker 0", Order: 1},
		{ID: GraphicsQueue, Kind: timeline.TrackGPUQueue, Name: "graphics queue", Queue: nvidia, Order: 0},
		{ID: GraphicsLane, Kind: timeline.TrackGPULane, Name: "graphics queue (lane 1)", Parent: GraphicsQueue, Queue: nvidia, Lane: 1},
		{ID: ComputeQueue, Kind: timeline.TrackGPUQueue, Name: "compute queue", Queue: compute, Order: 1},
		{ID: CPUTimeCounter, Kind: timeline.TrackCounter, Name: "CPU time per frame", Unit: timeline.UnitNs, Order: -1},
	}
}

// Generator makes frames one at a time.
type Generator struct {
	rng   *rand.Rand
	now   int64
	frame uint64
	out   *timeline.Trace
}

// New returns a generator seeded with seed, starting at a plausible
// CLOCK_MONOTONIC time (a machine up for about 20 minutes).
func New(seed uint64) *Generator {
	return &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: 1_234_567_890_123}
}

// Trace returns a whole timeline of at least n spans.
func Trace(n int, seed uint64) *timeline.Trace {
	g := New(seed)
	t := g.Batch(nil)
	for len(t.Spans) < n {
		g.Frame(t)
	}
	return t
}

// Batch returns an empty batch with the full name and track tables, ready
// for Frame, reusing t's slices when t is not nil.
func (g *Generator) Batch(t *timeline.Trace) *timeline.Trace {
	if t == nil {
		t = &timeline.Trace{Process: timeline.Process{PID: 4242, Name: "triangle"}, Names: Names, Tracks: Tracks()}
	}
	t.Spans, t.Flows, t.Frames, t.Samples, t.Calibrations = t.Spans[:0], t.Flows[:0], t.Frames[:0], t.Samples[:0], t.Calibrations[:0]
	return t
}

// Frame appends one frame of work to t: about 60 spans.
func (g *Generator) Frame(t *timeline.Trace) {
	g.out = t
	g.frame++
	start := g.now
	period := int64(16_666_667)
	cpuEnd := start + 9_000_000 + g.rng.Int64N(4_000_000)
	root := g.span(FramesTrack, 1, start, start+period-1000, 0, 0)
	_ = root
	// CPU: the main thread's frame, nested three deep.
	g.tree(MainTrack, start+2000, cpuEnd, 0, 2, 0)
	// A worker runs jobs.
	g.tree(WorkerTrack, start+500_000, cpuEnd-1_000_000, 0, 21, 0)
	// GPU: passes on the graphics queue, overlapping work on its lane,
	// async compute; zones carry the calibration error bound.
	gpuStart := start + 3_000_000 + g.rng.Int64N(500_000)
	gpuEnd := gpuStart + 8_000_000 + g.rng.Int64N(3_000_000)
	first := len(t.Spans)
	g.tree(GraphicsQueue, gpuStart, gpuEnd, 0, 26, 2600)
	g.tree(GraphicsLane, gpuEnd-1_500_000, gpuEnd+400_000, 0, 44, 2600)
	g.tree(ComputeQueue, gpuStart+1_000_000, gpuStart+5_000_000, 0, 47, 2600)
	// Flows: the main thread's vkQueueSubmit spans to the GPU's outermost zones.
	var submits []int
	for i := range t.Spans[:first] {
		if t.Spans[i].Track == MainTrack && t.Spans[i].Name == 14 && t.Spans[i].Frame == g.frame {
			submits = append(submits, i)
		}
	}
	k := 0
	for i := first; i < len(t.Spans) && len(submits) > 0; i++ {
		if t.Spans[i].Depth == 0 {
			t.Flows = append(t.Flows, timeline.Flow{From: submits[k%len(submits)], To: i})
			k++
		}
	}
	t.Frames = append(t.Frames, timeline.Frame{ID: g.frame, Start: start, End: start + period - 1000})
	t.Samples = append(t.Samples, timeline.Sample{Track: CPUTimeCounter, Time: cpuEnd, Value: float64(cpuEnd - start)})
	t.Calibrations = append(t.Calibrations, timeline.Calibration{Track: GraphicsQueue, Time: gpuEnd, ErrNs: 2600, DriftPPM: 9.8, Samples: 32})
	g.now = start + period
}

func (g *Generator) span(track timeline.TrackID, name timeline.NameID, start, end int64, depth uint16, errNs uint32) int {
	g.out.Spans = append(g.out.Spans, timeline.Span{Track: track, Name: name, Start: start, End: end, Frame: g.frame, Depth: depth, ErrNs: errNs})
	return len(g.out.Spans) - 1
}

// tree lays nested spans over [start, end): a span, then up to four
// children splitting most of it, three levels deep. Names come from a band
// of Names starting at base.
func (g *Generator) tree(track timeline.TrackID, start, end int64, depth uint16, base int, errNs uint32) {
	name := timeline.NameID(base + int(depth)*4 + g.rng.IntN(4))
	if int(name) >= len(Names) {
		name = timeline.NameID(1 + g.rng.IntN(len(Names)-1))
	}
	if track == MainTrack && depth == 1 && g.rng.IntN(3) == 0 {
		name = 14 // vkQueueSubmit
	}
	g.span(track, name, start, end, depth, errNs)
	if depth >= 3 || end-start < 20_000 {
		return
	}
	kids := 1 + g.rng.IntN(4)
	span := (end - start) / int64(kids)
	for i := 0; i < kids; i++ {
		s := start + int64(i)*span + span/10 + g.rng.Int64N(span/10+1)
		e := start + int64(i+1)*span - span/10 - g.rng.Int64N(span/10+1)
		if e > s {
			g.tree(track, s, e, depth+1, base, errNs)
		}
	}
}
