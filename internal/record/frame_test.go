package record

import "github.com/framescope/framescope/timeline"
import "testing"

func TestFrameIDs(t *testing.T) {
	r, q, zone := gpuSetup(Options{SettleFrames: 3})
	cpu := r.CPUTrack("render")
	work := r.Name("work")
	if id := r.Frame(); id != 0 {
		t.Fatalf("frame before any: %d", id)
	}
	cpu.Span(work).End() // outside any frame
	type pending struct {
		frame      uint64
		start, end int64
	}
	var queue []pending
	for want := uint64(1); want <= 10; want++ {
		if id := r.BeginFrame(); id != want {
			t.Fatalf("BeginFrame = %d, want %d", id, want)
		}
		cpu.Span(work).End()
		now := timeline.Now()
		queue = append(queue, pending{want, now, now + 1000})
		// GPU results of frame N arrive while frame N+3 records.
		if len(queue) > 3 {
			p := queue[0]
			queue = queue[1:]
			if err := r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: p.start, End: p.end, Frame: p.frame}}); err != nil {
				t.Fatal(err)
			}
		}
		if d := r.EndFrame(); d <= 0 {
			t.Fatalf("frame duration %d", d)
		}
	}
	for _, p := range queue {
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: p.start, End: p.end, Frame: p.frame}})
	}
	tr := r.Dump()
	checkDepths(t, tr)
	var gpu, cpuSpans int
	frameStart := map[uint64]int64{}
	for _, f := range tr.Frames {
		frameStart[f.ID] = f.Start
	}
	for _, s := range tr.Spans {
		switch tr.Track(s.Track).Kind {
		case timeline.TrackGPUQueue, timeline.TrackGPULane:
			gpu++
		case timeline.TrackCPU:
			cpuSpans++
			if s.Frame == 0 {
				if f, ok := frameStart[1]; ok && s.Start >= f {
					t.Errorf("span inside frames has no frame: %+v", s)
				}
				continue
			}
			fr := tr.Frames[s.Frame-1]
			if s.Start < fr.Start || s.End > fr.End {
				t.Errorf("span %+v outside its frame %+v", s, fr)
			}
		}
	}
	if gpu != 10 || cpuSpans != 11 || len(tr.Frames) != 10 {
		t.Fatalf("%d GPU, %d CPU spans, %d frames", gpu, cpuSpans, len(tr.Frames))
	}
	// Each GPU span must carry the frame that recorded it, even though it
	// arrived three frames later.
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track).Kind; k == timeline.TrackGPUQueue {
			fr := tr.Frames[s.Frame-1]
			if s.Start < fr.Start || s.Start > fr.End {
				t.Errorf("GPU span %+v is not in frame %d [%d, %d]", s, s.Frame, fr.Start, fr.End)
			}
		}
	}
}

func TestFrameMisuse(t *testing.T) {
	r := NewRecorder(Options{})
	if d := r.EndFrame(); d != 0 {
		t.Fatalf("EndFrame with none open = %d", d)
	}
	r.BeginFrame()
	r.BeginFrame() // ends frame 1 first
	r.EndFrame()
	tr := r.Dump()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tr.Frames) != 2 || tr.Frames[0].ID != 1 || tr.Frames[1].ID != 2 {
		t.Fatalf("frames %+v", tr.Frames)
	}
	if m := r.Stats().Drops.Misuse; m != 2 {
		t.Fatalf("misuse %d, want 2", m)
	}
	r.BeginFrame()
	tr = r.Dump()
	if last := tr.Frames[len(tr.Frames)-1]; last.ID != 3 || last.End != 0 {
		t.Fatalf("open frame %+v not in the dump", last)
	}
}

func TestFrameCounters(t *testing.T) {
	r, q, zone := gpuSetup(Options{SettleFrames: 2})
	q2 := r.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 2, Index: 0, Flags: "compute"})
	for f := uint64(1); f <= 6; f++ {
		r.BeginFrame()
		base := int64(f) * 1_000_000
		// Busy 0-300 and 200-500 on two queues (union 500), plus a nested
		// zone that must not count twice.
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: base, End: base + 300, Frame: f}, {Name: zone, Start: base + 10, End: base + 20, Frame: f}})
		_ = r.AddGPUSpans(q2, []GPUSpan{{Name: zone, Start: base + 200, End: base + 500, Frame: f}})
		if f == 3 {
			r.AddDrops(timeline.Drops{QueryLimit: 7})
		}
		r.EndFrame()
	}
	tr := r.Dump()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	byName := map[string][]timeline.Sample{}
	for _, s := range tr.Samples {
		tk := tr.Track(s.Track)
		if tk.Kind != timeline.TrackCounter {
			t.Fatalf("sample on %+v", tk)
		}
		byName[tk.Name] = append(byName[tk.Name], s)
	}
	// One CPU time sample per frame, at its end: End-Start.
	cpuTime := byName["CPU time per frame"]
	if len(cpuTime) != 6 || len(tr.Frames) != 6 {
		t.Fatalf("%d CPU time samples for %d frames, want 6", len(cpuTime), len(tr.Frames))
	}
	for i, f := range tr.Frames {
		if s := cpuTime[i]; s.Time != f.End || s.Value != float64(f.End-f.Start) || f.End <= f.Start {
			t.Errorf("frame %+v: CPU time sample %+v, want %d at %d", f, s, f.End-f.Start, f.End)
		}
	}
	// Frames 1..4 have settled (frame 6 ended, settle 2).
	gpu := byName["GPU time per frame"]
	if len(gpu) != 4 {
		t.Fatalf("%d GPU time samples, want 4: %+v", len(gpu), gpu)
	}
	for _, s := range gpu {
		if s.Value != 500 {
			t.Errorf("GPU time %v, want 500", s.Value)
		}
	}
	if d := byName["GPU zones dropped"]; len(d) != 1 || d[0].Value != 7 {
		t.Errorf("zones dropped samples %+v", d)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(byNameOf(r.Dump())["GPU time per frame"]); n != 6 {
		t.Errorf("after Close: %d GPU time samples, want 6", n)
	}
}

func byNameOf(tr *timeline.Trace) map[string][]timeline.Sample {
	m := map[string][]timeline.Sample{}
	for _, s := range tr.Samples {
		m[tr.Track(s.Track).Name] = append(m[tr.Track(s.Track).Name], s)
	}
	return m
}

// BenchmarkFrame records whole frames as a render loop would (8 CPU
// spans, one submission, 8 GPU zones two frames late, a counter) and
// streams them to a sink that discards: the recorder's full cost per frame.
func BenchmarkFrame(b *testing.B) {
	discard := timeline.SinkFunc(func(*timeline.Trace) error { return nil })
	r, q, zone := gpuSetup(Options{Sink: discard, FlushEvery: 4, WindowFrames: 120})
	cpu := r.CPUTrack("render")
	work, submit := r.Name("work"), r.Name("submit")
	c := r.Counter("draws", timeline.UnitCount)
	gpu := make([]GPUSpan, 8)
	b.ReportAllocs()
	var f uint64
	for b.Loop() {
		f = r.BeginFrame()
		outer := cpu.Span(work)
		for range 6 {
			cpu.Span(work).End()
		}
		s := cpu.Span(submit)
		s.Submitted(f)
		s.End()
		outer.End()
		if f > 2 {
			now := timeline.Now()
			for i := range gpu {
				gpu[i] = GPUSpan{Name: zone, Start: now + int64(i)*1000, End: now + int64(i)*1000 + 900, Frame: f - 2, Key: f - 2}
			}
			_ = r.AddGPUSpans(q, gpu)
		}
		c.Set(float64(f))
		r.EndFrame()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/17, "ns/span")
}

// TestGPUDropsCounter checks that GPU zones the recorder drops itself are
// counted apart from CPU spans, and sampled on "GPU zones dropped" with
// those the profiler reports.
func TestGPUDropsCounter(t *testing.T) {
	r, q, zone := gpuSetup(Options{MaxLanes: 1})
	cpu := r.CPUTrack("render")
	r.BeginFrame()
	cpu.Span(timeline.NameID(999)).End() // a CPU span dropped: a name never given out
	_ = r.AddGPUSpans(q, []GPUSpan{
		{Name: zone, Start: 10, End: 5, Frame: 1},    // End < Start
		{Name: 999, Start: 10, End: 20, Frame: 1},    // unknown name
		{Name: zone, Start: 0, End: 100, Frame: 1},   // kept
		{Name: zone, Start: 50, End: 150, Frame: 1},  // no second lane
		{Name: zone, Start: 200, End: 300, Frame: 1}, // kept
	})
	_ = r.AddGPUSpans(timeline.TrackID(777), []GPUSpan{{Name: zone, Start: 0, End: 1, Frame: 1}}) // unknown track
	r.AddDrops(timeline.Drops{QueryLimit: 2, Unended: 3, Uncalibrated: 4})
	r.EndFrame()
	r.BeginFrame()
	r.EndFrame() // nothing new dropped: no new sample

	d := r.Stats().Drops
	if want := (timeline.Drops{QueryLimit: 2, Unended: 3, Uncalibrated: 4, Spans: 1, GPUSpans: 4}); d != want {
		t.Fatalf("drops %+v, want %+v", d, want)
	}
	tr := r.Dump()
	if tr.Drops != d {
		t.Errorf("trace drops %+v, want %+v", tr.Drops, d)
	}
	// 2+3+4 from the profiler, 4 from the recorder; not the CPU span.
	if s := byNameOf(tr)["GPU zones dropped"]; len(s) != 1 || s[0].Value != 13 {
		t.Errorf("GPU zones dropped samples %+v, want one of 13", s)
	}
}

// TestLateGPUResultsCounted checks that GPU zones whose frame's GPU time
// was already sampled stay on the timeline, leave the sample as it was,
// and are counted in Drops.Untimed; and that a frame with no GPU zones
// gets no sample.
func TestLateGPUResultsCounted(t *testing.T) {
	r, q, zone := gpuSetup(Options{SettleFrames: 2})
	q2 := r.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 2, Flags: "compute"})
	base := timeline.Now()
	at := func(f uint64, off int64) int64 { return base + int64(f)*1_000_000 + off }
	for f := uint64(1); f <= 3; f++ {
		r.BeginFrame()
		if f != 2 { // frame 2 has no GPU work
			_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: at(f, 0), End: at(f, 300), Frame: f}})
		}
		r.EndFrame()
	}
	// Frame 1 settled when frame 3 ended: its time is sampled as 300.
	_ = r.AddGPUSpans(q2, []GPUSpan{{Name: zone, Start: at(1, 400), End: at(1, 900), Frame: 1}})  // late
	_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: at(1, 1000), End: at(1, 2000), Frame: 1}}) // late
	_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: at(1, 2100), End: at(1, 2200), Frame: 9}}) // a frame not begun
	_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: at(1, 3000), End: at(1, 4000)}})           // no frame: not timed, not counted
	if u := r.Stats().Drops.Untimed; u != 3 {
		t.Fatalf("untimed %d, want 3", u)
	}
	if err := r.Close(); err != nil { // settles frame 3
		t.Fatal(err)
	}
	// After Close, frame 3's time is sampled: a zone of it is late too.
	_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: at(3, 500), End: at(3, 600), Frame: 3}})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	tr := r.Dump()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if tr.Drops.Untimed != 4 || tr.Drops.GPUSpans != 0 {
		t.Errorf("drops %+v, want 4 untimed and no GPU span dropped", tr.Drops)
	}
	var gpuSpans int
	for _, s := range tr.Spans {
		if k := tr.Track(s.Track).Kind; k == timeline.TrackGPUQueue || k == timeline.TrackGPULane {
			gpuSpans++
		}
	}
	if gpuSpans != 7 {
		t.Errorf("%d GPU spans on the timeline, want all 7", gpuSpans)
	}
	// Frames 1 and 3, once each; none for frame 2.
	got := byNameOf(tr)["GPU time per frame"]
	want := []timeline.Sample{{Time: at(1, 300), Value: 300}, {Time: at(3, 300), Value: 300}}
	if len(got) != len(want) {
		t.Fatalf("GPU time samples %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Time != want[i].Time || got[i].Value != want[i].Value {
			t.Errorf("GPU time sample %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
