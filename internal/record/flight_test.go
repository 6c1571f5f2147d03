package record

import (
	"runtime"
	"testing"
	"time"

	"github.com/framescope/framescope/timeline"
)

func TestWindowFrames(t *testing.T) {
	const window = 5
	r, q, zone := gpuSetup(Options{WindowFrames: window})
	cpu := r.CPUTrack("render")
	work, idle := r.Name("work"), r.Name("idle")
	c := r.Counter("draws", timeline.UnitCount)
	var late []GPUSpan
	run := func(from, to uint64) {
		for f := from; f <= to; f++ {
			r.BeginFrame()
			s := cpu.Span(work)
			now := timeline.Now()
			late = append(late, GPUSpan{Name: zone, Start: now, End: now + 10, Frame: f})
			if len(late) > 2 { // results two frames late
				_ = r.AddGPUSpans(q, late[:1])
				late = late[1:]
			}
			c.Set(float64(f))
			s.End()
			r.EndFrame()
			cpu.Span(idle).End() // between frames: no frame
		}
	}
	check := func(first, last uint64) *timeline.Trace {
		t.Helper()
		_ = r.AddGPUSpans(q, late)
		late = nil
		tr := r.Dump()
		checkDepths(t, tr)
		if len(tr.Frames) != window || tr.Frames[0].ID != first || tr.Frames[window-1].ID != last {
			t.Fatalf("frames %+v, want %d..%d", tr.Frames, first, last)
		}
		since := tr.Frames[0].Start
		count := map[timeline.TrackKind]int{}
		for _, s := range tr.Spans {
			if s.Frame != 0 && (s.Frame < first || s.Frame > last) {
				t.Errorf("span of frame %d outside the window", s.Frame)
			}
			if s.Frame == 0 && s.End < since {
				t.Errorf("frameless span %+v ended before the window", s)
			}
			count[tr.Track(s.Track).Kind]++
		}
		// Each kept frame: its frame span, one CPU work span, one GPU span,
		// and the frameless idle span after it.
		if count[timeline.TrackFrames] != window || count[timeline.TrackGPUQueue] != window || count[timeline.TrackCPU] != 2*window {
			t.Errorf("span counts %v", count)
		}
		for _, s := range tr.Samples {
			if s.Time < since {
				t.Errorf("sample %+v before the window", s)
			}
		}
		return tr
	}
	run(1, 20)
	tr := check(16, 20)
	// Spans of frames 1..15 left without being dumped or streamed: per
	// frame a CPU, a GPU, a frame and an idle span.
	if want := uint64(15 * 4); tr.Drops.Evicted != want {
		t.Fatalf("evicted %d, want %d", tr.Drops.Evicted, want)
	}
	run(21, 25)
	tr = check(21, 25)
	// What the first dump held is not counted when it ages out.
	if want := uint64(15 * 4); tr.Drops.Evicted != want {
		t.Fatalf("evicted %d after a dump, want %d", tr.Drops.Evicted, want)
	}
}

func TestWindowDuration(t *testing.T) {
	r, q, zone := gpuSetup(Options{WindowDuration: 1000})
	c := r.Counter("c", timeline.UnitNone)
	base := timeline.Now()
	var spans []GPUSpan
	for i := int64(0); i < 100; i++ {
		spans = append(spans, GPUSpan{Name: zone, Start: base + i*100, End: base + i*100 + 50})
		c.SetAt(base+i*100, float64(i))
	}
	if err := r.AddGPUSpans(q, spans); err != nil {
		t.Fatal(err)
	}
	r.lock()
	tr := r.dumpAt(base + 10_000) // the window is [base+9000, base+10000]
	r.mu.Unlock()
	checkDepths(t, tr)
	if len(tr.Spans) != 10 {
		t.Fatalf("%d spans, want 10", len(tr.Spans))
	}
	for _, s := range tr.Spans {
		if s.End < base+9000 {
			t.Errorf("span %+v ended before the window", s)
		}
	}
	if len(tr.Samples) != 10 || tr.Samples[0].Value != 90 {
		t.Fatalf("samples %+v", tr.Samples)
	}
	if tr.Drops.Evicted != 90 {
		t.Fatalf("evicted %d, want 90", tr.Drops.Evicted)
	}
}

func TestMaxSpans(t *testing.T) {
	r, q, zone := gpuSetup(Options{MaxSpans: 100})
	var spans []GPUSpan
	for i := int64(0); i < 1000; i++ {
		spans = append(spans, GPUSpan{Name: zone, Start: i * 10, End: i*10 + 5})
	}
	_ = r.AddGPUSpans(q, spans)
	tr := r.Dump()
	if len(tr.Spans) != 100 || tr.Drops.Evicted != 900 || tr.Spans[0].Start != 9000 {
		t.Fatalf("%d spans from %d, %d evicted", len(tr.Spans), tr.Spans[0].Start, tr.Drops.Evicted)
	}
}

// heapInuse returns HeapInuse after a GC.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// longRunMode is one configuration of TestLongRunHeapBounded.
type longRunMode struct {
	name     string
	window   int           // Options.WindowFrames
	duration time.Duration // Options.WindowDuration
	sink     bool          // stream to a sink every 8 frames
	late     bool          // GPU results 2 and 3 frames late, on two queues
}

func TestLongRunHeapBounded(t *testing.T) {
	for _, m := range []longRunMode{
		{name: "flight recorder", window: 60},
		{name: "streaming", sink: true},
		{name: "streaming with a window", window: 60, sink: true},
		// The window holds a few frames; what the store holds is what
		// EndFrame has not yet let go of, whatever the frame rate.
		{name: "duration window", duration: 200 * time.Microsecond},
		{name: "late results on two queues", window: 60, late: true},
	} {
		t.Run(m.name, func(t *testing.T) { longRun(t, m) })
	}
}

// maxGrowth is how much the heap may grow between 50k and 100k frames: a
// leak of a few bytes per frame shows above it.
const maxGrowth = 128 << 10

// longRun records 100k frames of small work and checks the heap does not
// grow between 10k, 50k and 100k frames.
func longRun(t *testing.T, m longRunMode) {
	const frames = 100_000
	var batches, streamed int
	// Keys expire by frames, never by time on a slow machine.
	o := Options{WindowFrames: m.window, WindowDuration: m.duration, SettleTimeout: time.Hour}
	if m.sink {
		o.FlushEvery = 8
		o.Sink = timeline.SinkFunc(func(b *timeline.Trace) error {
			batches++
			streamed += len(b.Spans)
			return nil
		})
	}
	r, q, zone := gpuSetup(o)
	q2 := r.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 2, Flags: "compute"})
	cpu := r.CPUTrack("render")
	frame, update, submit := r.Name("frame"), r.Name("update"), r.Name("submit")
	draws := r.Counter("draws", timeline.UnitCount)
	perFrame := 7 // 3 CPU, 3 GPU, 1 frame span
	if m.late {
		perFrame = 8 // and one on the second queue
	}
	gpu := make([]GPUSpan, 3)
	// gpuOf fills gpu with the zones of frame f, which began at start.
	gpuOf := func(f uint64, start int64) []GPUSpan {
		gpu[0] = GPUSpan{Name: zone, Start: start, End: start + 1000, Frame: f, Key: f}
		gpu[1] = GPUSpan{Name: zone, Start: start + 100, End: start + 400, Frame: f, Key: f}
		gpu[2] = GPUSpan{Name: zone, Start: start + 900, End: start + 1500, Frame: f, Key: f} // overlaps: a lane
		return gpu
	}
	var starts [4]int64 // GPU start times of the last frames, by frame%4
	var heap [3]uint64  // at 10k, 50k and 100k frames
	var maxMoved uint64 // the most items one EndFrame let go or moved
	for f := uint64(1); f <= frames; f++ {
		r.BeginFrame()
		outer := cpu.Span(frame)
		cpu.Span(update).End()
		s := cpu.Span(submit)
		s.Submitted(f)
		s.End()
		outer.End()
		now := timeline.Now()
		if !m.late {
			_ = r.AddGPUSpans(q, gpuOf(f, now))
		} else {
			starts[f%4] = now
			if f > 2 {
				_ = r.AddGPUSpans(q, gpuOf(f-2, starts[(f-2)%4]))
			}
			if f > 3 {
				g := starts[(f-3)%4]
				_ = r.AddGPUSpans(q2, []GPUSpan{{Name: zone, Start: g + 200, End: g + 2000, Frame: f - 3, Key: f - 3}})
			}
		}
		draws.Set(float64(f % 100))
		before := r.moved
		r.EndFrame()
		maxMoved = max(maxMoved, r.moved-before)
		switch f {
		case 10_000:
			heap[0] = heapInuse()
		case 50_000:
			heap[1] = heapInuse()
		case frames:
			heap[2] = heapInuse()
		}
	}
	t.Logf("HeapInuse after GC: %d KiB at 10k frames, %d KiB at 50k, %d KiB at 100k (%+d bytes from 50k); %d batches; at most %d items moved by one EndFrame",
		heap[0]>>10, heap[1]>>10, heap[2]>>10, int64(heap[2])-int64(heap[1]), batches, maxMoved)
	if heap[2] > heap[0]+heap[0]/2+1<<20 {
		t.Errorf("heap grew from %d bytes at 10k frames to %d at 100k", heap[0], heap[2])
	}
	if heap[2] > heap[1]+maxGrowth {
		t.Errorf("heap grew by %d bytes from 50k to 100k frames, more than %d", heap[2]-heap[1], maxGrowth)
	}
	if maxMoved > maxEndFrameWork(perFrame+2) { // and 2 samples
		t.Errorf("one EndFrame let go of %d items, more than %d", maxMoved, maxEndFrameWork(perFrame+2))
	}
	if m.late { // the results the loop left for later
		for f := uint64(frames - 1); f <= frames; f++ {
			_ = r.AddGPUSpans(q, gpuOf(f, starts[f%4]))
		}
		for f := uint64(frames - 2); f <= frames; f++ {
			g := starts[f%4]
			_ = r.AddGPUSpans(q2, []GPUSpan{{Name: zone, Start: g + 200, End: g + 2000, Frame: f, Key: f}})
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if want := frames * perFrame; m.sink && streamed != want {
		t.Errorf("streamed %d spans, want %d", streamed, want)
	}
	tr := r.Dump()
	checkDepths(t, tr)
	st := r.Stats()
	if st.FlowsSplit != 0 || st.ZonesUnlinked != 0 || st.SubmitsUnmatched != 0 || st.Drops.Spans != 0 || st.Drops.GPUSpans != 0 || st.Drops.Untimed != 0 {
		t.Errorf("stats %+v", st)
	}
	if !m.sink && m.window > 0 {
		if want := uint64(frames-m.window) * uint64(perFrame); st.Drops.Evicted != want {
			t.Errorf("evicted %d, want %d", st.Drops.Evicted, want)
		}
		if len(tr.Frames) != m.window || len(tr.Spans) != m.window*perFrame {
			t.Errorf("dump holds %d frames and %d spans", len(tr.Frames), len(tr.Spans))
		}
	}
	if m.duration > 0 {
		if len(tr.Frames) >= frames/2 || st.Drops.Evicted == 0 {
			t.Errorf("dump holds %d frames, %d spans evicted: no window", len(tr.Frames), st.Drops.Evicted)
		}
	}
}

// maxEndFrameWork is the most items one EndFrame may let go of or move
// when perFrame are stored a frame: for each of the five kinds, twice
// what was stored since the last step and evictChunk (see evict), and
// one over the cap for each item EndFrame stores itself.
func maxEndFrameWork(perFrame int) uint64 {
	return uint64(5*(2*perFrame+evictChunk) + 4)
}

// TestLongRunDefaults records a few million frames with the zero
// Options and checks that the recorder keeps the newest MaxSpans of each
// kind, counts every other one as evicted, holds its heap flat once full,
// and never lets go of or moves more than a frame's worth of items in one
// EndFrame. Under the race detector or -short it records fewer frames
// with a smaller cap, which it still fills many times over.
func TestLongRunDefaults(t *testing.T) {
	frames, o := 3_000_000, Options{}
	maxSpans := DefaultMaxSpans
	if raceOn || testing.Short() {
		frames, maxSpans = 500_000, 1<<16
		o.MaxSpans = maxSpans
	}
	heap0 := heapInuse()
	r := NewRecorder(o)
	cpu := r.CPUTrack("render")
	work := r.Name("work")
	draws := r.Counter("draws", timeline.UnitCount)
	// A frame stores its frame, 2 spans (its own and work) and 2 samples
	// (CPU time, draws).
	const perFrame = 5
	var heap [2]uint64 // at half the frames and at the end
	var maxMoved uint64
	for f := 1; f <= frames; f++ {
		r.BeginFrame()
		cpu.Span(work).End()
		draws.Set(float64(f))
		before := r.moved
		r.EndFrame()
		maxMoved = max(maxMoved, r.moved-before)
		switch f {
		case frames / 2:
			heap[0] = heapInuse()
		case frames:
			heap[1] = heapInuse()
		}
	}
	t.Logf("%d frames, MaxSpans %d: HeapInuse after GC %d KiB before, %d KiB at half, %d KiB at the end; at most %d items moved by one EndFrame",
		frames, maxSpans, heap0>>10, heap[0]>>10, heap[1]>>10, maxMoved)
	// What the five kinds hold at most, in blocks, and a MiB of slack.
	bound := heap0 + uint64(maxSpans+2*blockLen)*(56+24+24+40+24) + 1<<20
	if heap[0] > bound || heap[1] > bound {
		t.Errorf("heap %d bytes at half, %d at the end; want at most %d", heap[0], heap[1], bound)
	}
	if heap[1] > heap[0]+maxGrowth {
		t.Errorf("heap grew by %d bytes in the second half, more than %d", heap[1]-heap[0], maxGrowth)
	}
	if maxMoved > maxEndFrameWork(perFrame) {
		t.Errorf("one EndFrame let go of or moved %d items, more than %d", maxMoved, maxEndFrameWork(perFrame))
	}
	st := r.Stats()
	n := uint64(frames)
	want := ItemCounts{Spans: 2*n - uint64(maxSpans), Frames: n - uint64(maxSpans), Samples: 2*n - uint64(maxSpans)}
	if st.Evicted != want || st.Drops.Evicted != want.Spans {
		t.Errorf("evicted %+v (drops %d), want %+v", st.Evicted, st.Drops.Evicted, want)
	}
	tr := r.Dump()
	if len(tr.Spans) != maxSpans || len(tr.Frames) != maxSpans || len(tr.Samples) != maxSpans {
		t.Fatalf("dump holds %d spans, %d frames, %d samples; want %d of each", len(tr.Spans), len(tr.Frames), len(tr.Samples), maxSpans)
	}
	if last := tr.Frames[len(tr.Frames)-1].ID; last != n || tr.Frames[0].ID != n-uint64(maxSpans)+1 {
		t.Errorf("dump holds frames %d..%d, want the newest %d", tr.Frames[0].ID, last, maxSpans)
	}
	if st := r.Stats(); st.Evicted != want {
		t.Errorf("after Dump: evicted %+v, want %+v", st.Evicted, want)
	}
}

func BenchmarkDump(b *testing.B) {
	r, q, zone := gpuSetup(Options{WindowFrames: 100})
	cpu := r.CPUTrack("render")
	work := r.Name("work")
	gpu := make([]GPUSpan, 8)
	for f := uint64(1); f <= 200; f++ {
		r.BeginFrame()
		for range 8 {
			s := cpu.Span(work)
			s.Submitted(f)
			s.End()
		}
		now := timeline.Now()
		for i := range gpu {
			gpu[i] = GPUSpan{Name: zone, Start: now + int64(i)*100, End: now + int64(i)*100 + 90, Frame: f, Key: f}
		}
		_ = r.AddGPUSpans(q, gpu)
		r.EndFrame()
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(r.Dump().Spans)
	}
	b.ReportMetric(float64(n), "spans/dump")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/span")
}
