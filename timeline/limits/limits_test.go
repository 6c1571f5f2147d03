package limits_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/framescope/framescope/timeline"
	"github.com/framescope/framescope/timeline/limits"
)

const ms = int64(1_000_000)

// builder makes a trace of one CPU thread (track 1) and two GPU queues
// (tracks 2 and 3, a lane of 2 as track 4), the layer's names on the CPU.
type builder struct{ t timeline.Trace }

func newBuilder() *builder {
	b := &builder{t: timeline.Trace{Names: []string{""}}}
	b.t.Tracks = []timeline.Track{
		{ID: 1, Kind: timeline.TrackCPU, Name: "main"},
		{ID: 2, Kind: timeline.TrackGPUQueue, Name: "graphics"},
		{ID: 3, Kind: timeline.TrackGPUQueue, Name: "compute"},
		{ID: 4, Kind: timeline.TrackGPULane, Name: "graphics lane 1", Parent: 2, Lane: 1},
	}
	return b
}

func (b *builder) name(s string) timeline.NameID {
	for i, n := range b.t.Names {
		if n == s {
			return timeline.NameID(i)
		}
	}
	b.t.Names = append(b.t.Names, s)
	return timeline.NameID(len(b.t.Names) - 1)
}

// span adds a span and returns its index.
func (b *builder) span(track timeline.TrackID, name string, start, end int64, depth uint16) int {
	b.t.Spans = append(b.t.Spans, timeline.Span{Track: track, Name: b.name(name), Start: start, End: end, Depth: depth})
	return len(b.t.Spans) - 1
}

// submit adds a vkQueueSubmit span and GPU work on queue it carries,
// with an arrow to each.
func (b *builder) submit(at, dur int64, queue timeline.TrackID, work ...[2]int64) {
	s := b.span(1, "vkQueueSubmit", at, at+dur, 0)
	for _, w := range work {
		b.t.Flows = append(b.t.Flows, timeline.Flow{From: s, To: b.span(queue, "command buffer", w[0], w[1], 0)})
	}
}

func (b *builder) frame(id uint64, start, end int64) {
	b.t.Frames = append(b.t.Frames, timeline.Frame{ID: id, Start: start, End: end})
}

// One frame of each kind, its figures and its gaps' causes as the rules
// say (a fifth, the last, left out): CPU-bound (8 ms of work, then 1 ms of GPU waited for), GPU-bound
// (the thread waits 9.6 ms for 9.5 ms of GPU), presentation-bound (a
// vsync wait of 11.7 ms in vkQueuePresentKHR), and a gap of the GPU
// behind another queue (work submitted before the gap began).
func TestFramesOfKnownLimit(t *testing.T) {
	b := newBuilder()
	// Frame 1, CPU-bound: [0, 10 ms).
	b.span(1, "update", 0, 8*ms, 0)
	b.submit(8*ms, ms/10, 2, [2]int64{82 * ms / 10, 92 * ms / 10})
	b.span(1, "vkWaitForFences", 81*ms/10, 93*ms/10, 0)
	b.frame(1, 0, 10*ms)
	// Frame 2, GPU-bound: [10, 20 ms).
	b.submit(101*ms/10, ms/10, 2, [2]int64{103 * ms / 10, 198 * ms / 10})
	b.span(1, "vkWaitForFences", 102*ms/10, 199*ms/10, 0)
	b.frame(2, 10*ms, 20*ms)
	// Frame 3, presentation-bound: [20, 40 ms): 2 ms of work, 3 ms of GPU, a present to its end.
	b.submit(22*ms, ms/10, 2, [2]int64{222 * ms / 10, 252 * ms / 10})
	b.span(1, "vkQueuePresentKHR", 253*ms/10, 40*ms, 0)
	b.frame(3, 20*ms, 40*ms)
	// Frame 4: compute's work submitted at 40.5 ms waits behind graphics' (41-42 ms), running 43-49 ms.
	b.submit(405*ms/10, ms/10, 2, [2]int64{41 * ms, 42 * ms})
	b.submit(406*ms/10, ms/10, 3, [2]int64{43 * ms, 49 * ms})
	b.frame(4, 40*ms, 50*ms)
	b.frame(5, 50*ms, 51*ms) // the last: its end is the trace's, and it is left out

	r := limits.Of(&b.t)
	if len(r.Frames) != 4 {
		t.Fatalf("%d frames, want 4", len(r.Frames))
	}
	for i, c := range []struct {
		limit             limits.Limit
		gpu, cpu, present int64
		latency           int64
		causes            string
	}{
		{limits.CPU, ms, 10*ms - 12*ms/10, 0, 2 * ms / 10, "[waiting for submit waiting for submit]"},
		{limits.GPU, 95 * ms / 10, 10*ms - 97*ms/10, 0, 2 * ms / 10, "[waiting for submit waiting for submit]"},
		{limits.Present, 3 * ms, 20*ms - 147*ms/10, 147 * ms / 10, 2 * ms / 10, "[waiting for submit waiting on present]"},
		{limits.CPU, 7 * ms, 10 * ms, 0, ms / 2, "[waiting for submit waiting for a dependency waiting for submit]"},
	} {
		f := r.Frames[i]
		var causes []string
		for _, g := range f.Gaps {
			causes = append(causes, g.Cause.String())
		}
		if f.Limit != c.limit || f.GPUBusy != c.gpu || f.CPUBusy != c.cpu || f.PresentWait != c.present ||
			f.Latency != c.latency || fmt.Sprint(causes) != c.causes {
			t.Errorf("frame %d: %v, GPU busy %d, CPU busy %d, present %d, latency %d, gaps %v\nwant %v, %d, %d, %d, %d, %s",
				f.ID, f.Limit, f.GPUBusy, f.CPUBusy, f.PresentWait, f.Latency, causes, c.limit, c.gpu, c.cpu, c.present, c.latency, c.causes)
		}
	}
	if r.Share(limits.CPU) != 0.5 || r.Share(limits.GPU) != 0.25 || r.Share(limits.Present) != 0.25 {
		t.Errorf("shares: cpu %g, gpu %g, present %g", r.Share(limits.CPU), r.Share(limits.GPU), r.Share(limits.Present))
	}
}

// A program using the library names its spans as it likes: the span an
// arrow leaves (GPU.Submit's) is the frame's submission, and a span named
// as the Vulkan call it wraps is a wait. Its thread is the submitting one,
// and a frame that waits on the GPU is GPU-bound.
func TestSubmissionByArrow(t *testing.T) {
	b := newBuilder()
	for k := range int64(3) {
		at := k * 10 * ms
		s := b.span(1, "submit", at+ms, at+ms+ms/10, 0)
		b.t.Flows = append(b.t.Flows, timeline.Flow{From: s, To: b.span(2, "frame", at+ms+ms/5, at+9*ms, 0)})
		b.span(1, "vkWaitForFences", at+ms+ms/10, at+9*ms+ms/10, 0)
		b.frame(uint64(k+1), at, at+10*ms)
	}
	r := limits.Of(&b.t)
	if len(r.Frames) != 2 {
		t.Fatalf("%d frames, want 2", len(r.Frames))
	}
	for _, f := range r.Frames {
		if f.Thread != 1 || f.Limit != limits.GPU || f.CPUBusy != 2*ms || f.Latency != ms/5 {
			t.Errorf("frame %d: thread %d, %v, CPU busy %d, latency %d; want thread 1, gpu, %d, %d", f.ID, f.Thread, f.Limit, f.CPUBusy, f.Latency, 2*ms, ms/5)
		}
	}
}

// A gap before work the thread submitted once vkAcquireNextImageKHR
// returned was presentation's, not the CPU's: the thread sat in acquire
// for most of it.
func TestGapBehindAcquire(t *testing.T) {
	b := newBuilder()
	for k := range int64(3) {
		at := k * 10 * ms
		b.span(1, "vkAcquireNextImageKHR", at, at+6*ms, 0)
		b.submit(at+6*ms, ms/10, 2, [2]int64{at + 62*ms/10, at + 8*ms})
		b.span(1, "vkQueuePresentKHR", at+81*ms/10, at+82*ms/10, 0)
		b.frame(uint64(k+1), at, at+10*ms)
	}
	r := limits.Of(&b.t)
	for _, f := range r.Frames {
		var causes []string
		for _, g := range f.Gaps {
			causes = append(causes, g.Cause.String())
		}
		if want := "[waiting on present waiting for submit]"; fmt.Sprint(causes) != want {
			t.Errorf("frame %d: gaps %v, want %s", f.ID, causes, want)
		}
	}
}

// A seeded checker: frames drawn CPU-bound, GPU-bound or presentation-
// bound by a schedule, work on two queues and a lane that overlap, waits
// that nest and overlap; every frame's verdict is its schedule's, GPU
// busy is the union measured on a grid of 1 us, busy and gaps tile the
// frame, and CPU busy and wait make it up. FRAMESCOPE_LIMITS_SEEDS sets
// how many seeds (20); a failing seed prints itself, and
// FRAMESCOPE_LIMITS_SEED=N replays it.
func TestDrawnFrames(t *testing.T) {
	first, n := uint64(1), 20
	if v, err := strconv.Atoi(os.Getenv("FRAMESCOPE_LIMITS_SEEDS")); err == nil {
		n = v
	}
	if v, err := strconv.ParseUint(os.Getenv("FRAMESCOPE_LIMITS_SEED"), 10, 64); err == nil {
		first, n = v, 1
	}
	for seed := first; seed < first+uint64(n); seed++ {
		b, want := drawFrames(seed)
		r := limits.Of(&b.t)
		if err := checkFrames(&b.t, r, want); err != nil {
			t.Fatalf("seed %d (FRAMESCOPE_LIMITS_SEED=%d replays it): %v", seed, seed, err)
		}
	}
}

// drawFrames draws 40 frames of 5-20 ms, each's limit by the schedule.
func drawFrames(seed uint64) (*builder, []limits.Limit) {
	rng := rand.New(rand.NewPCG(seed, 46))
	b := newBuilder()
	us := int64(1000)
	at := int64(0)
	var want []limits.Limit
	for k := range 40 {
		d := (5 + rng.Int64N(16)) * ms
		start := at
		limit := []limits.Limit{limits.CPU, limits.GPU, limits.Present}[rng.IntN(3)]
		switch limit {
		case limits.CPU: // work 70-90% of the frame, GPU 5-20%, waited for
			work := d * (70 + rng.Int64N(21)) / 100
			gpu := d * (5 + rng.Int64N(16)) / 100
			b.span(1, "update", start, start+work, 0)
			sub := start + work
			b.submit(sub, 50*us, 2, [2]int64{sub + 60*us, sub + 60*us + gpu})
			b.span(1, "vkWaitForFences", sub+50*us, sub+70*us+gpu, 0)
		case limits.GPU: // work 2-10%, GPU 70-95% split over two queues and a lane
			work := d * (2 + rng.Int64N(9)) / 100
			gpu := d * (70 + rng.Int64N(26)) / 100
			sub := start + work
			g0 := sub + 60*us
			half := gpu / 2
			b.submit(sub, 50*us, 2, [2]int64{g0, g0 + half}, [2]int64{g0 + half, g0 + gpu})
			b.span(4, "overlap", g0+half/4, g0+half/2, 0) // a lane's work inside the queue's: counted once
			b.submit(sub+10*us, 20*us, 3, [2]int64{g0 + half/3, g0 + half/2})
			b.span(1, "vkWaitForFences", sub+50*us, g0+gpu+10*us, 0)
			b.span(1, "vkWaitSemaphores", g0, g0+half/3, 1) // nested in the fence wait: counted once
		case limits.Present: // work 10-20%, GPU 10-20%, a present to the frame's end
			work := d * (10 + rng.Int64N(11)) / 100
			gpu := d * (10 + rng.Int64N(11)) / 100
			sub := start + work
			b.submit(sub, 50*us, 2, [2]int64{sub + 60*us, sub + 60*us + gpu})
			b.span(1, "vkQueuePresentKHR", sub+50*us, start+d, 0)
		}
		b.frame(uint64(k+1), start, start+d)
		want = append(want, limit)
		at = start + d
	}
	b.frame(41, at, at+ms) // the next frame's start ends the 40th
	return b, want
}

func checkFrames(t *timeline.Trace, r limits.Report, want []limits.Limit) error {
	if len(r.Frames) != len(want) {
		return fmt.Errorf("%d frames, want %d", len(r.Frames), len(want))
	}
	for i, f := range r.Frames {
		if f.Limit != want[i] {
			return fmt.Errorf("frame %d: %v, want %v (GPU busy %d, CPU busy %d, present %d of %d)", f.ID, f.Limit, want[i], f.GPUBusy, f.CPUBusy, f.PresentWait, f.Dur())
		}
		if g := gridBusy(t, f.Start, f.End); abs(g-f.GPUBusy) > 1000 {
			return fmt.Errorf("frame %d: GPU busy %d, %d on a grid of 1 us", f.ID, f.GPUBusy, g)
		}
		gaps := int64(0)
		for _, g := range f.Gaps {
			gaps += g.End - g.Start
		}
		if gaps+f.GPUBusy != f.Dur() || f.CPUBusy+f.CPUWait != f.Dur() {
			return fmt.Errorf("frame %d: gaps %d + busy %d, CPU busy %d + wait %d, not the frame's %d", f.ID, gaps, f.GPUBusy, f.CPUBusy, f.CPUWait, f.Dur())
		}
	}
	return nil
}

// gridBusy is the GPU busy time of [start, end) counted on a grid of 1 us:
// a tick is busy where any outermost GPU span covers it.
func gridBusy(t *timeline.Trace, start, end int64) int64 {
	var in []timeline.Span
	for _, s := range t.Spans {
		if tr := t.Track(s.Track); tr != nil && tr.Kind != timeline.TrackCPU && s.Depth == 0 && s.Start < end && s.End > start {
			in = append(in, s)
		}
	}
	busy := int64(0)
	for at := start; at < end; at += 1000 {
		for _, s := range in {
			if s.Start <= at && at < s.End {
				busy += 1000
				break
			}
		}
	}
	return busy
}

func abs(x int64) int64 { return max(x, -x) }
