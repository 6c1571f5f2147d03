package record

import (
	"slices"
	"testing"
	"time"

	"github.com/framescope/framescope/timeline"
)

// frameIDs lists the frames of tr.
func frameIDs(tr *timeline.Trace) []uint64 {
	var ids []uint64
	for _, f := range tr.Frames {
		ids = append(ids, f.ID)
	}
	return ids
}

// spanFrames lists, sorted and once each, the frames of tr's spans of the
// given kinds.
func spanFrames(tr *timeline.Trace, kinds ...timeline.TrackKind) []uint64 {
	var ids []uint64
	for _, s := range tr.Spans {
		if slices.Contains(kinds, tr.Track(s.Track).Kind) && !slices.Contains(ids, s.Frame) {
			ids = append(ids, s.Frame)
		}
	}
	slices.Sort(ids)
	return ids
}

func span(from, to uint64) []uint64 {
	var ids []uint64
	for f := from; f <= to; f++ {
		ids = append(ids, f)
	}
	return ids
}

// TestCPUBudget runs frames that are all over a 1 ns CPU budget and checks
// which of them OnBudget gets, with which window, and that OnBudget runs
// outside the recorder's lock.
func TestCPUBudget(t *testing.T) {
	var r *Recorder
	var got []OverBudget
	var stats []Stats
	r = NewRecorder(Options{
		WindowFrames: 3,
		CPUBudget:    1, // every frame sleeps at least 1µs
		BudgetEvery:  4,
		OnBudget: func(o OverBudget) {
			got = append(got, o)
			stats = append(stats, r.Stats()) // takes the lock: would deadlock under it
		},
	})
	cpu := r.CPUTrack("render")
	work := r.Name("work")
	took := map[uint64]int64{}
	for f := uint64(1); f <= 12; f++ {
		r.BeginFrame()
		s := cpu.Span(work)
		time.Sleep(time.Microsecond)
		s.End()
		took[f] = r.EndFrame()
		if n := len(got); n > 0 && got[n-1].Frame == f && got[n-1].Trace == nil {
			t.Fatalf("frame %d: no trace", f)
		}
	}
	r.BeginFrame()
	cpu.Span(work).End()
	time.Sleep(time.Microsecond)
	r.BeginFrame() // ends frame 13 (misuse): over budget too
	time.Sleep(time.Microsecond)
	took[14] = r.EndFrame()
	for _, f := range r.Dump().Frames { // frame 13, ended by BeginFrame
		if f.ID == 13 {
			took[13] = f.End - f.Start
		}
	}

	// Every frame is over budget, by how long it slept. The calls: the
	// first frame, which starts no wait; then one every 4 frames, and in
	// between a frame that took longer than the one last passed.
	type call struct {
		frame  uint64
		frames []uint64
	}
	var want []call
	var next, ended uint64
	var last int64
	for f := uint64(1); f <= 14; f++ {
		ended++
		if ended < next && took[f] <= last {
			continue
		}
		if len(want) > 0 {
			next = ended + 4
		}
		last = took[f]
		want = append(want, call{f, span(max(f, 3)-2, f)})
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		o := got[i]
		if o.Frame != w.frame || o.Budget != BudgetCPU || o.Limit != 1 {
			t.Errorf("call %d: frame %d budget %v limit %v, want frame %d cpu 1ns", i, o.Frame, o.Budget, o.Limit, w.frame)
		}
		if d, ok := took[o.Frame]; ok && int64(o.Took) != d {
			t.Errorf("frame %d took %v, EndFrame said %d ns", o.Frame, o.Took, d)
		}
		if err := o.Trace.Validate(); err != nil {
			t.Fatal(err)
		}
		// The window ending with the frame: its frames, and their spans.
		if ids := frameIDs(o.Trace); !slices.Equal(ids, w.frames) {
			t.Errorf("frame %d: window holds frames %v, want %v", o.Frame, ids, w.frames)
		}
		if ids := spanFrames(o.Trace, timeline.TrackCPU, timeline.TrackFrames); !slices.Equal(ids, w.frames) {
			t.Errorf("frame %d: window holds spans of frames %v, want %v", o.Frame, ids, w.frames)
		}
		last := o.Trace.Frames[len(o.Trace.Frames)-1]
		if int64(o.Took) != last.End-last.Start {
			t.Errorf("frame %d took %v, its frame %+v", o.Frame, o.Took, last)
		}
		cpuTime := byNameOf(o.Trace)["CPU time per frame"]
		if n := len(cpuTime); n == 0 || cpuTime[n-1].Value != float64(o.Took) {
			t.Errorf("frame %d: last CPU time sample %+v, want %d", o.Frame, cpuTime, o.Took)
		}
	}
	if st := r.Stats(); st.OverBudget != 14 || st.BudgetSkipped != uint64(14-len(want)) {
		t.Errorf("over budget %d, skipped %d; want 14 and %d", st.OverBudget, st.BudgetSkipped, 14-len(want))
	}
	if stats[0].OverBudget != 1 {
		t.Errorf("Stats from OnBudget %+v", stats[0])
	}
}

// TestGPUBudget checks the GPU budget with results that come a frame
// late, so that a frame's GPU time settles two frames after it ended.
func TestGPUBudget(t *testing.T) {
	var got []OverBudget
	r, q, zone := gpuSetup(Options{
		WindowFrames: 4,
		SettleFrames: 2,
		GPUBudget:    1000,
		BudgetEvery:  3,
		OnBudget:     func(o OverBudget) { got = append(got, o) },
	})
	q2 := r.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 2, Flags: "compute"})
	cpu := r.CPUTrack("render")
	work := r.Name("work")
	// Each frame's GPU work is placed at the frame's own start, so that
	// its GPU time sample lies within the frame window however slowly the
	// test runs.
	starts := map[uint64]int64{}
	base := func(f uint64) int64 { return starts[f] }
	over := map[uint64]bool{3: true, 4: true, 9: true, 13: true}
	results := func(f uint64) {
		b := base(f)
		switch {
		case f == 6: // no GPU work
		case over[f]: // 2000 ns: [0, 1500] on one queue, [1000, 2000] on another
			_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: b, End: b + 1500, Frame: f}, {Name: zone, Start: b + 100, End: b + 1400, Frame: f, Depth: 1}})
			_ = r.AddGPUSpans(q2, []GPUSpan{{Name: zone, Start: b + 1000, End: b + 2000, Frame: f}})
		default: // 1000 ns: not over
			_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: b, End: b + 600, Frame: f}})
			_ = r.AddGPUSpans(q2, []GPUSpan{{Name: zone, Start: b + 500, End: b + 1000, Frame: f}})
		}
	}
	for f := uint64(1); f <= 13; f++ {
		r.BeginFrame()
		starts[f] = timeline.Now()
		cpu.Span(work).End()
		if f > 1 {
			results(f - 1) // a frame late
		}
		r.EndFrame()
	}
	results(13)
	if len(got) != 3 {
		t.Fatalf("%d calls before Close, want 3: %+v", len(got), got)
	}
	if err := r.Close(); err != nil { // settles frame 13
		t.Fatal(err)
	}

	// Frame 3 is found at EndFrame(5): the first, it starts no wait.
	// Frame 4 is found at EndFrame(6), frame 9 at EndFrame(11), 5 frames
	// later; frame 13 at Close, within BudgetEvery of 9 and no worse.
	want := []struct {
		frame     uint64
		frames    []uint64
		gpuFrames []uint64
	}{
		{3, span(2, 5), span(2, 4)},
		{4, span(3, 6), span(3, 5)},
		{9, span(8, 11), span(8, 10)},
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		o := got[i]
		if o.Frame != w.frame || o.Budget != BudgetGPU || o.Limit != 1000 || o.Took != 2000 {
			t.Errorf("call %d: %+v, want frame %d over the GPU budget of 1µs by taking 2µs", i, o, w.frame)
		}
		if err := o.Trace.Validate(); err != nil {
			t.Fatal(err)
		}
		if ids := frameIDs(o.Trace); !slices.Equal(ids, w.frames) {
			t.Errorf("frame %d: window holds frames %v, want %v", o.Frame, ids, w.frames)
		}
		if ids := spanFrames(o.Trace, timeline.TrackGPUQueue, timeline.TrackGPULane); !slices.Equal(ids, w.gpuFrames) {
			t.Errorf("frame %d: window holds GPU spans of frames %v, want %v", o.Frame, ids, w.gpuFrames)
		}
		found := false
		for _, s := range byNameOf(o.Trace)["GPU time per frame"] {
			found = found || s.Time == base(o.Frame)+2000 && s.Value == 2000
		}
		if !found {
			t.Errorf("frame %d: its GPU time sample is not in the window", o.Frame)
		}
	}
	if st := r.Stats(); st.OverBudget != 4 || st.BudgetSkipped != 1 {
		t.Errorf("over budget %d, skipped %d; want 4 and 1", st.OverBudget, st.BudgetSkipped)
	}
}

// TestBudgetsShareADump checks that the CPU and GPU budgets crossed in one
// EndFrame get one dump between them.
func TestBudgetsShareADump(t *testing.T) {
	var got []OverBudget
	r, q, zone := gpuSetup(Options{
		SettleFrames: 1, CPUBudget: 1, GPUBudget: 1000, BudgetEvery: 1,
		OnBudget: func(o OverBudget) { got = append(got, o) },
	})
	for f := uint64(1); f <= 2; f++ {
		r.BeginFrame()
		now := timeline.Now()
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: now, End: now + 1500, Frame: f}})
		time.Sleep(time.Microsecond)
		r.EndFrame()
	}
	// EndFrame(1): frame 1's CPU time. EndFrame(2): frame 2's CPU time,
	// then frame 1's GPU time.
	if len(got) != 3 || got[0].Budget != BudgetCPU || got[1].Budget != BudgetCPU || got[2].Budget != BudgetGPU ||
		got[0].Frame != 1 || got[1].Frame != 2 || got[2].Frame != 1 {
		t.Fatalf("calls %+v", got)
	}
	if got[1].Trace != got[2].Trace || got[0].Trace == got[1].Trace {
		t.Errorf("traces %p %p %p: want the last two shared", got[0].Trace, got[1].Trace, got[2].Trace)
	}
}

// TestUnderBudget checks that frames under their budgets, and budgets
// without OnBudget, call nothing.
func TestUnderBudget(t *testing.T) {
	calls := 0
	for _, o := range []Options{
		{CPUBudget: time.Hour, GPUBudget: time.Hour, OnBudget: func(OverBudget) { calls++ }},
		{CPUBudget: 1, GPUBudget: 1}, // no OnBudget
	} {
		o.WindowFrames = 3
		r, q, zone := gpuSetup(o)
		for f := uint64(1); f <= 20; f++ {
			r.BeginFrame()
			now := timeline.Now()
			_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: now, End: now + 1500, Frame: f}})
			time.Sleep(time.Microsecond)
			r.EndFrame()
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if st := r.Stats(); st.OverBudget != 0 || st.BudgetSkipped != 0 {
			t.Errorf("stats %+v", st)
		}
	}
	if calls != 0 {
		t.Errorf("OnBudget called %d times under budget", calls)
	}
}

// TestBudgetNeverHidesWorse checks that neither a warm-up frame nor the
// BudgetEvery wait hides a frame worse than the one last passed to
// OnBudget (issue 12: a warm-up frame used the allowance and a later
// 255.8 ms frame was never dumped).
func TestBudgetNeverHidesWorse(t *testing.T) {
	var got []OverBudget
	r, q, zone := gpuSetup(Options{
		WindowFrames: 4,
		SettleFrames: 1,
		GPUBudget:    1000,
		BudgetEvery:  10,
		OnBudget:     func(o OverBudget) { got = append(got, o) },
	})
	// GPU time of each frame in ns; 500 for the others. Frame f is found
	// at EndFrame(f+1).
	took := map[uint64]int64{
		1: 5000, // warm-up: passed, starts no wait
		2: 1500, // passed: the first after warm-up, waits until EndFrame(13)
		3: 1200, // skipped: no worse than 2
		4: 2558, // passed: worse than 2, waits again, until EndFrame(15)
		5: 2558, // skipped: as bad as 4, not worse
		6: 1100, // skipped
		7: 3000, // passed: worse than 4, waits until EndFrame(18)
		// 8..18 under budget
		19: 1100, // passed: the wait is over
		20: 1050, // skipped: within the wait, no worse
	}
	base := timeline.Now()
	for f := uint64(1); f <= 21; f++ {
		r.BeginFrame()
		d, ok := took[f]
		if !ok {
			d = 500
		}
		b := base + int64(f)*1_000_000
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: b, End: b + d, Frame: f}})
		r.EndFrame()
	}
	want := []uint64{1, 2, 4, 7, 19}
	var frames []uint64
	for _, o := range got {
		frames = append(frames, o.Frame)
		if int64(o.Took) != took[o.Frame] {
			t.Errorf("frame %d took %v, want %dns", o.Frame, o.Took, took[o.Frame])
		}
		if ids := frameIDs(o.Trace); !slices.Contains(ids, o.Frame) {
			t.Errorf("frame %d: its window holds frames %v", o.Frame, ids)
		}
	}
	if !slices.Equal(frames, want) {
		t.Fatalf("OnBudget got frames %v, want %v", frames, want)
	}
	if st := r.Stats(); st.OverBudget != 9 || st.BudgetSkipped != 4 {
		t.Errorf("over budget %d, skipped %d; want 9 and 4", st.OverBudget, st.BudgetSkipped)
	}
}
