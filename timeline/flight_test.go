package timeline

import (
	"runtime"
	"testing"
)

func TestWindowFrames(t *testing.T) {
	const window = 5
	r, q, zone := gpuSetup(Options{WindowFrames: window})
	cpu := r.CPUTrack("render")
	work, idle := r.Name("work"), r.Name("idle")
	c := r.Counter("draws", UnitCount)
	var late []GPUSpan
	run := func(from, to uint64) {
		for f := from; f <= to; f++ {
			r.BeginFrame()
			s := cpu.Span(work)
			now := Now()
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
	check := func(first, last uint64) *Trace {
		t.Helper()
		_ = r.AddGPUSpans(q, late)
		late = nil
		tr := r.Dump()
		checkDepths(t, tr)
		if len(tr.Frames) != window || tr.Frames[0].ID != first || tr.Frames[window-1].ID != last {
			t.Fatalf("frames %+v, want %d..%d", tr.Frames, first, last)
		}
		since := tr.Frames[0].Start
		count := map[TrackKind]int{}
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
		if count[TrackFrames] != window || count[TrackGPUQueue] != window || count[TrackCPU] != 2*window {
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
	c := r.Counter("c", UnitNone)
	base := Now()
	var spans []GPUSpan
	for i := int64(0); i < 100; i++ {
		spans = append(spans, GPUSpan{Name: zone, Start: base + i*100, End: base + i*100 + 50})
		c.SetAt(base+i*100, float64(i))
	}
	if err := r.AddGPUSpans(q, spans); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
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

func TestLongRunHeapBounded(t *testing.T) {
	tests := []struct {
		name   string
		window int
		sink   bool
	}{
		{"flight recorder", 60, false},
		{"streaming", 0, true},
		{"streaming with a window", 60, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { longRun(t, tc.window, tc.sink) })
	}
}

// longRun records 100k frames of small work and checks the heap does not
// grow between 10k and 100k frames.
func longRun(t *testing.T, window int, withSink bool) {
	const frames = 100_000
	var batches, streamed int
	o := Options{WindowFrames: window}
	if withSink {
		o.FlushEvery = 8
		o.Sink = SinkFunc(func(b *Trace) error {
			batches++
			streamed += len(b.Spans)
			return nil
		})
	}
	r, q, zone := gpuSetup(o)
	cpu := r.CPUTrack("render")
	frame, update, submit := r.Name("frame"), r.Name("update"), r.Name("submit")
	draws := r.Counter("draws", UnitCount)
	gpu := make([]GPUSpan, 3)
	var at10k uint64
	for f := uint64(1); f <= frames; f++ {
		r.BeginFrame()
		outer := cpu.Span(frame)
		cpu.Span(update).End()
		s := cpu.Span(submit)
		s.Submitted(f)
		s.End()
		outer.End()
		now := Now()
		gpu[0] = GPUSpan{Name: zone, Start: now, End: now + 1000, Frame: f, Key: f}
		gpu[1] = GPUSpan{Name: zone, Start: now + 100, End: now + 400, Frame: f, Key: f}
		gpu[2] = GPUSpan{Name: zone, Start: now + 900, End: now + 1500, Frame: f, Key: f} // overlaps: a lane
		_ = r.AddGPUSpans(q, gpu)
		draws.Set(float64(f % 100))
		r.EndFrame()
		if f == 10_000 {
			at10k = heapInuse()
		}
	}
	at100k := heapInuse()
	t.Logf("HeapInuse after GC: %d KiB at 10k frames, %d KiB at 100k frames (%.2fx); %d batches",
		at10k>>10, at100k>>10, float64(at100k)/float64(at10k), batches)
	if at100k > at10k+at10k/2+1<<20 {
		t.Errorf("heap grew from %d to %d bytes", at10k, at100k)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if want := frames * 7; withSink && streamed != want { // 3 CPU, 3 GPU, 1 frame span per frame
		t.Errorf("streamed %d spans, want %d", streamed, want)
	}
	tr := r.Dump()
	checkDepths(t, tr)
	st := r.Stats()
	if st.FlowsSplit != 0 || st.ZonesUnlinked != 0 || st.Drops.Spans != 0 {
		t.Errorf("stats %+v", st)
	}
	if !withSink && window > 0 {
		if want := uint64(frames-window) * 7; st.Drops.Evicted != want {
			t.Errorf("evicted %d, want %d", st.Drops.Evicted, want)
		}
		if len(tr.Frames) != window || len(tr.Spans) != window*7 {
			t.Errorf("dump holds %d frames and %d spans", len(tr.Frames), len(tr.Spans))
		}
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
		now := Now()
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
