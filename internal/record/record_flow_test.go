package record

import "github.com/framescope/framescope/timeline"
import "testing"

// flowPairs returns the flows of tr as (from name, to name) of their spans,
// checking they index spans.
func flowPairs(t *testing.T, tr *timeline.Trace) [][2]timeline.Span {
	t.Helper()
	var out [][2]timeline.Span
	for _, f := range tr.Flows {
		out = append(out, [2]timeline.Span{tr.Spans[f.From], tr.Spans[f.To]})
	}
	return out
}

func TestFlows(t *testing.T) {
	tests := []struct {
		name     string
		gpuFirst bool // GPU results before the CPU span has ended
	}{
		{"gpu after cpu", false},
		{"gpu before cpu ends", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, q, zone := gpuSetup(Options{})
			cpu := r.CPUTrack("render")
			frame, submit, other := r.Name("frame work"), r.Name("submit"), r.Name("other")
			r.BeginFrame()
			outer := cpu.Span(frame)
			cpu.Span(other).End()
			s := cpu.Span(submit)
			s.Submitted(41)
			s.Submitted(42) // one span may carry several submissions
			now := timeline.Now()
			gpu := []GPUSpan{
				{Name: zone, Start: now, End: now + 100, Frame: 1, Key: 41},
				{Name: zone, Start: now + 10, End: now + 50, Frame: 1, Key: 41},
				{Name: zone, Start: now + 200, End: now + 300, Frame: 1, Key: 42},
				{Name: zone, Start: now + 400, End: now + 500, Frame: 1, Key: 99}, // nobody submitted 99
			}
			if tc.gpuFirst {
				_ = r.AddGPUSpans(q, gpu)
				r.Dump() // collect in between
			}
			s.End()
			outer.End()
			if !tc.gpuFirst {
				r.Dump()
				_ = r.AddGPUSpans(q, gpu)
			}
			r.EndFrame()
			tr := r.Dump()
			checkDepths(t, tr)
			pairs := flowPairs(t, tr)
			if len(pairs) != 3 {
				t.Fatalf("%d flows, want 3: %+v", len(pairs), pairs)
			}
			for _, p := range pairs {
				if p[0].Name != submit || p[0].Track != cpu.ID() {
					t.Errorf("flow from %+v, want the submit span", p[0])
				}
				if tr.Track(p[1].Track).Kind != timeline.TrackGPUQueue || p[1].Start == now+400 {
					t.Errorf("flow to %+v", p[1])
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			st := r.Stats()
			if st.ZonesUnlinked != 1 || st.SubmitsUnmatched != 0 {
				t.Errorf("unlinked %d unmatched %d, want 1 and 0", st.ZonesUnlinked, st.SubmitsUnmatched)
			}
		})
	}
}

func TestFlowKeysExpire(t *testing.T) {
	r, q, zone := gpuSetup(Options{SettleFrames: 2, MaxPendingKeys: 8})
	cpu := r.CPUTrack("render")
	submit := r.Name("submit")
	// 20 submissions that never get GPU spans, then 20 GPU spans with keys
	// nobody submitted: the table stays bounded, the misses are counted.
	for k := uint64(1); k <= 20; k++ {
		s := cpu.Span(submit)
		s.Submitted(k)
		s.End()
	}
	r.Flush()
	for k := uint64(100); k < 120; k++ {
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: int64(k), End: int64(k), Key: k}})
	}
	if n := len(r.keys); n > 8 {
		t.Fatalf("%d keys pending, cap 8", n)
	}
	for range 3 {
		r.BeginFrame()
		r.EndFrame()
	}
	st := r.Stats()
	if st.SubmitsUnmatched != 20 || st.ZonesUnlinked != 20 || len(r.keys) != 0 {
		t.Fatalf("unmatched %d unlinked %d pending %d", st.SubmitsUnmatched, st.ZonesUnlinked, len(r.keys))
	}
	// A late GPU span for an expired key links to nothing, and is kept.
	_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: 5000, End: 5001, Key: 3}})
	tr := r.Dump()
	if len(tr.Flows) != 0 || len(tr.Spans) != 20+20+1+3 {
		t.Fatalf("%d flows, %d spans", len(tr.Flows), len(tr.Spans))
	}
	// Misuse: Submitted on a span that has ended, a key claimed twice.
	c := cpu.Span(submit)
	c.End()
	c.Submitted(7)
	a := cpu.Span(submit)
	a.Submitted(500)
	a.End()
	b := cpu.Span(submit)
	b.Submitted(500)
	b.End()
	a.Submitted(501) // a has ended
	r.Flush()
	st = r.Stats()
	if st.Drops.Misuse != 2 || st.DuplicateKeys != 1 {
		t.Fatalf("misuse %d duplicate %d", st.Drops.Misuse, st.DuplicateKeys)
	}
}

func TestQueueTracks(t *testing.T) {
	r := NewRecorder(Options{})
	qs := []timeline.Queue{
		{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics"},
		{Device: "NVIDIA H200", Family: 0, Index: 1, Flags: "graphics"},
		{Device: "NVIDIA H200", Family: 2, Index: 0, Flags: "compute"},
		{Device: "llvmpipe", Family: 0, Index: 0, Flags: "graphics+compute+transfer"},
	}
	names := []string{
		"NVIDIA H200 / graphics queue 0.0",
		"NVIDIA H200 / graphics queue 0.1",
		"NVIDIA H200 / compute queue 2.0",
		"llvmpipe / graphics+compute+transfer queue 0.0",
	}
	zone := r.Name("zone")
	ids := map[timeline.TrackID]bool{}
	for i, q := range qs {
		id := r.QueueTrack(q)
		if again := r.QueueTrack(q); again != id {
			t.Fatalf("queue %d: track %d then %d", i, id, again)
		}
		ids[id] = true
		if err := r.AddGPUSpans(id, []GPUSpan{{Name: zone, Start: 0, End: 10}}); err != nil {
			t.Fatal(err)
		}
		if err := r.AddCalibration(timeline.Calibration{Track: id, Time: 5, ErrNs: 2600, DriftPPM: 9.8, Samples: 16}); err != nil {
			t.Fatal(err)
		}
	}
	if len(ids) != len(qs) {
		t.Fatalf("%d tracks for %d queues", len(ids), len(qs))
	}
	tr := r.Dump()
	checkDepths(t, tr)
	for i, q := range qs {
		tk := tr.Track(r.QueueTrack(q))
		if tk.Kind != timeline.TrackGPUQueue || tk.Name != names[i] || tk.Queue != q {
			t.Errorf("queue %d track %+v, want name %q", i, tk, names[i])
		}
		if got := len(spansOn(tr, tk.ID)); got != 1 {
			t.Errorf("queue %d: %d spans", i, got)
		}
	}
	if len(tr.Calibrations) != 4 || len(byNameOf(tr)[names[2]+" clock error"]) != 1 {
		t.Fatalf("calibrations %+v samples %+v", tr.Calibrations, tr.Samples)
	}
	if err := r.AddCalibration(timeline.Calibration{Track: 999}); err == nil {
		t.Fatal("no error for a calibration of an unknown track")
	}
}

func TestUserCounters(t *testing.T) {
	r := NewRecorder(Options{})
	c := r.Counter("draw calls", timeline.UnitCount)
	if again := r.Counter("draw calls", timeline.UnitCount); again != c {
		t.Fatalf("counter registered twice: %v %v", c, again)
	}
	mem := r.Counter("heap", timeline.UnitBytes)
	c.Set(12)
	c.SetAt(100, 13)
	mem.Set(1 << 20)
	c.Set(nan())
	Counter{}.Set(1) // the zero counter does nothing
	tr := r.Dump()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	m := byNameOf(tr)
	if len(m["draw calls"]) != 2 || len(m["heap"]) != 1 || tr.Track(mem.ID()).Unit != timeline.UnitBytes {
		t.Fatalf("samples %+v", tr.Samples)
	}
	if r.Stats().Drops.Misuse != 1 {
		t.Fatal("NaN not counted")
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}
