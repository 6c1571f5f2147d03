package record

import (
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/framescope/framescope/timeline"
)

var flagLaneSeed = flag.Uint64("lane.seed", 0, "run TestFitSpineAgreesWithSearch and TestForgetAgreesWithScan with this seed alone")

// gpuSetup returns a recorder with one queue and a name.
func gpuSetup(o Options) (*Recorder, timeline.TrackID, timeline.NameID) {
	r := NewRecorder(o)
	q := r.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics"})
	return r, q, r.Name("zone")
}

// laneOf returns the lane number of track id in tr (0 for the queue).
func laneOf(t *testing.T, tr *timeline.Trace, id timeline.TrackID) int32 {
	t.Helper()
	tk := tr.Track(id)
	if tk == nil {
		t.Fatalf("track %d undefined", id)
	}
	return tk.Lane
}

func TestGPULanes(t *testing.T) {
	type in struct{ start, end int64 }
	type out struct {
		lane  int32
		depth uint16
	}
	tests := []struct {
		name    string
		batches [][]in
		want    []out // per input span, in input order
	}{
		{
			name:    "nested on one lane",
			batches: [][]in{{{0, 100}, {10, 40}, {20, 30}, {50, 90}}},
			want:    []out{{0, 0}, {0, 1}, {0, 2}, {0, 1}},
		},
		{
			name:    "children before parent in one batch",
			batches: [][]in{{{20, 30}, {10, 40}, {0, 100}}},
			want:    []out{{0, 2}, {0, 1}, {0, 0}},
		},
		{
			name:    "back-to-back overlap goes to a lane",
			batches: [][]in{{{0, 100}, {50, 150}, {60, 70}}},
			want:    []out{{0, 0}, {1, 0}, {0, 1}},
		},
		{
			name:    "greedy reuse of lanes",
			batches: [][]in{{{0, 100}, {50, 150}, {120, 200}, {140, 250}, {210, 300}}},
			want:    []out{{0, 0}, {1, 0}, {0, 0}, {2, 0}, {0, 0}},
		},
		{
			name:    "a zone follows its parent to its lane",
			batches: [][]in{{{1000, 5000}, {4000, 9000}, {6000, 7000}}},
			want:    []out{{0, 0}, {1, 0}, {1, 1}},
		},
		{
			name:    "three way overlap",
			batches: [][]in{{{0, 100}, {10, 110}, {20, 120}, {130, 140}}},
			want:    []out{{0, 0}, {1, 0}, {2, 0}, {0, 0}},
		},
		{
			name:    "touching is not overlapping",
			batches: [][]in{{{0, 10}, {10, 20}, {20, 30}, {30, 30}}},
			want:    []out{{0, 0}, {0, 0}, {0, 0}, {0, 0}},
		},
		{
			name:    "an empty zone at a start is inside",
			batches: [][]in{{{20, 20}, {20, 30}}},
			want:    []out{{0, 1}, {0, 0}},
		},
		{
			name:    "equal intervals nest",
			batches: [][]in{{{0, 10}, {0, 10}}},
			want:    []out{{0, 0}, {0, 1}},
		},
		{
			name:    "late batch fits a gap in the past",
			batches: [][]in{{{100, 200}, {300, 400}}, {{210, 290}, {0, 90}}},
			want:    []out{{0, 0}, {0, 0}, {0, 0}, {0, 0}},
		},
		{
			name:    "late child nests in an earlier parent",
			batches: [][]in{{{0, 100}}, {{20, 30}}, {{25, 28}}},
			want:    []out{{0, 0}, {0, 1}, {0, 2}},
		},
		{
			name:    "late parent cannot wrap placed spans",
			batches: [][]in{{{20, 30}, {40, 50}}, {{0, 100}}},
			want:    []out{{0, 0}, {0, 0}, {1, 0}},
		},
		{
			name:    "late span crossing a placed one",
			batches: [][]in{{{0, 100}, {10, 20}}, {{90, 150}, {95, 99}}},
			want:    []out{{0, 0}, {0, 1}, {1, 0}, {0, 1}}, // first fit: lane 0 holds it
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, q, _ := gpuSetup(Options{})
			var n int
			for _, b := range tc.batches {
				var spans []GPUSpan
				for _, s := range b {
					n++
					// Name each span by its input index, to find it again.
					spans = append(spans, GPUSpan{Name: r.Name(string(rune('A' + n - 1))), Start: s.start, End: s.end})
				}
				if err := r.AddGPUSpans(q, spans); err != nil {
					t.Fatal(err)
				}
			}
			tr := r.Dump()
			checkDepths(t, tr)
			if len(tr.Spans) != len(tc.want) {
				t.Fatalf("%d spans, want %d", len(tr.Spans), len(tc.want))
			}
			for _, s := range tr.Spans {
				i := int(tr.Name(s.Name)[0] - 'A')
				w := tc.want[i]
				if l := laneOf(t, tr, s.Track); l != w.lane || s.Depth != w.depth {
					t.Errorf("span %d [%d,%d]: lane %d depth %d, want lane %d depth %d", i, s.Start, s.End, l, s.Depth, w.lane, w.depth)
				}
			}
			for _, tk := range tr.Tracks {
				if tk.Kind == timeline.TrackGPULane && (tk.Parent != q || tk.Queue != tr.Track(q).Queue) {
					t.Errorf("lane %+v not under queue %d", tk, q)
				}
			}
		})
	}
}

func TestGPUBadInput(t *testing.T) {
	r, q, name := gpuSetup(Options{MaxLanes: 2})
	err := r.AddGPUSpans(q, []GPUSpan{
		{Name: name, Start: 10, End: 5},   // ends before it starts
		{Name: 999, Start: 10, End: 20},   // unknown name
		{Name: name, Start: 0, End: 100},  // lane 0
		{Name: name, Start: 50, End: 150}, // lane 1
		{Name: name, Start: 60, End: 160}, // no third lane allowed
	})
	if err == nil {
		t.Fatal("no error for bad spans")
	}
	if err := r.AddGPUSpans(12345, []GPUSpan{{Name: name, Start: 0, End: 1}}); err == nil {
		t.Fatal("no error for an unknown track")
	}
	cpu := r.CPUTrack("main")
	if err := r.AddGPUSpans(cpu.ID(), []GPUSpan{{Name: name, Start: 0, End: 1}}); err == nil {
		t.Fatal("no error for GPU spans on a CPU track")
	}
	tr := r.Dump()
	checkDepths(t, tr)
	if len(tr.Spans) != 2 || tr.Drops.GPUSpans != 5 || tr.Drops.Spans != 0 {
		t.Fatalf("%d spans, drops %+v; want 2 spans and 5 GPU spans dropped", len(tr.Spans), tr.Drops)
	}
}

func TestGPULongHistory(t *testing.T) {
	// Far more zones than a lane remembers, in order, under one long zone
	// per batch, with a pipelined overlap each time: two lanes suffice.
	r, q, name := gpuSetup(Options{})
	var total int
	for b := int64(0); b < 20; b++ {
		base := b * 1_000_000
		spans := []GPUSpan{{Name: name, Start: base, End: base + 900_000}}
		for i := int64(0); i < 300; i++ {
			spans = append(spans, GPUSpan{Name: name, Start: base + 1000 + i*2000, End: base + 2000 + i*2000})
		}
		spans = append(spans, GPUSpan{Name: name, Start: base + 800_000, End: base + 1_100_000})
		total += len(spans)
		if err := r.AddGPUSpans(q, spans); err != nil {
			t.Fatal(err)
		}
	}
	tr := r.Dump()
	checkDepths(t, tr)
	if len(tr.Spans) != total {
		t.Fatalf("%d spans, want %d", len(tr.Spans), total)
	}
	lanes := 0
	for _, tk := range tr.Tracks {
		if tk.Kind == timeline.TrackGPULane {
			lanes++
		}
	}
	if lanes != 1 {
		t.Fatalf("%d extra lanes, want 1", lanes)
	}
}

// FuzzGPUSpans feeds arbitrary batches of zones and checks that every
// zone is placed or counted, and that every track stays properly nested
// with right depths.
func FuzzGPUSpans(f *testing.F) {
	f.Add([]byte{0, 10, 2, 5, 3, 4, 8, 20, 1, 1, 0, 0})
	f.Add([]byte{0, 100, 50, 100, 20, 30, 255, 1, 25, 3, 0, 200})
	f.Add([]byte{5, 5, 5, 5, 5, 5, 5, 5, 0, 255, 255, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			t.Skip("4096 zones are enough")
		}
		r, q, name := gpuSetup(Options{MaxLanes: 4})
		var in int
		for len(data) >= 4 {
			n := 1 + int(data[0]%8)
			var spans []GPUSpan
			for i := 0; i < n && len(data) >= 4; i++ {
				s := int64(binary.LittleEndian.Uint16(data))
				d := int64(data[2])
				if data[3]&1 == 1 {
					d = -d // ends before it starts now and then
				}
				spans = append(spans, GPUSpan{Name: name, Start: s, End: s + d, Depth: uint16(data[3] >> 4)})
				data = data[4:]
			}
			in += len(spans)
			_ = r.AddGPUSpans(q, spans) // errors for the bad ones are expected
		}
		tr := r.Dump()
		checkDepths(t, tr)
		if got := uint64(len(tr.Spans)) + tr.Drops.GPUSpans; got != uint64(in) || tr.Drops.Spans != 0 {
			t.Fatalf("%d kept + %d dropped (drops %+v), want %d", len(tr.Spans), tr.Drops.GPUSpans, tr.Drops, in)
		}
	})
}

// BenchmarkAddGPUSpans adds frames of 64 zones (a few nested, some
// overlapping the next command buffer) and reports the cost per zone.
func BenchmarkAddGPUSpans(b *testing.B) {
	discard := timeline.SinkFunc(func(*timeline.Trace) error { return nil })
	r, q, zone := gpuSetup(Options{Sink: discard})
	const per = 64
	spans := make([]GPUSpan, per)
	b.ReportAllocs()
	var f uint64
	for b.Loop() {
		f++
		base := int64(f) * 100_000
		for i := range spans {
			s := base + int64(i/4)*5000 + int64(i%4)*100
			spans[i] = GPUSpan{Name: zone, Start: s, End: s + 4900 - int64(i%4)*200, Frame: f, Depth: uint16(i % 4)}
		}
		spans[per-1].End = base + 120_000 // runs into the next frame: a lane
		if err := r.AddGPUSpans(q, spans); err != nil {
			b.Fatal(err)
		}
		if f%16 == 0 {
			b.StopTimer()
			_ = r.Flush()
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/span")
}

// laneSeeds returns seeds 1 to n, or the one -lane.seed names.
func laneSeeds(n uint64) []uint64 {
	if *flagLaneSeed != 0 {
		return []uint64{*flagLaneSeed}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i) + 1
	}
	return seeds
}

// The spine's fit (for a span after every placed one) agrees with the
// search's on every step of random lanes: nested, touching, equal and
// crossing spans, past the history's limit (forget). A failing seed
// prints itself; go test ./internal/record -run FitSpine -lane.seed=N
// replays it.
func TestFitSpineAgreesWithSearch(t *testing.T) {
	seeds := laneSeeds(40)
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 3))
		l := &lane{}
		at := int64(0)
		for step := 0; step < 3*laneHistory; step++ {
			at += rng.Int64N(4)
			s, e := at, at+rng.Int64N(12)
			if rng.IntN(8) == 0 {
				s -= rng.Int64N(40) // now and then, one that sorts earlier
			}
			var ls, wls laneSpan
			pos, ok := l.fit(s, e, &ls)
			wpos, wok := l.fitSearch(s, e, &wls)
			if ok != wok || ok && (pos != wpos || ls != wls) {
				t.Fatalf("seed %d, step %d: fit(%d, %d) = %d %+v %v, search says %d %+v %v", seed, step, s, e, pos, ls, ok, wpos, wls, wok)
			}
			if ok {
				l.insert(pos, &ls)
			}
		}
	}
}

// BenchmarkDeliverFrame hands a GPU source frames of 1000 zones, 500
// outer zones each holding one inner zone, in recording order, on a
// flight recorder of 4 frames: what GPU.Collect hands the recorder each
// frame of the profiler's BenchmarkCollect. It reports ns a zone.
func BenchmarkDeliverFrame(b *testing.B) {
	r, q, zone := gpuSetup(Options{WindowFrames: 4})
	src := r.GPUSource(q)
	const per = 1000
	spans := make([]GPUSpan, per)
	b.ReportAllocs()
	for b.Loop() {
		f := r.BeginFrame()
		base := int64(f) * 200_000
		for i := 0; i < per; i += 2 {
			s := base + int64(i)*100
			spans[i] = GPUSpan{Name: zone, Start: s, End: s + 150, Frame: f}
			spans[i+1] = GPUSpan{Name: zone, Start: s + 20, End: s + 120, Frame: f, Depth: 1}
		}
		if err := src.Deliver(spans, SourceReport{}); err != nil {
			b.Fatal(err)
		}
		src.Settle(f)
		r.EndFrame()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/zone")
}

// forgetByScan is forget as a pass over the half let go: the reference
// that forget's walks up parent links must agree with.
func forgetByScan(l *lane) {
	k := len(l.spans) / 2
	x := l.spans[k].start
	var keep []laneSpan
	for i := 0; i < k; i++ {
		if p := l.spans[i]; p.end > x {
			keep = append(keep, p)
		} else {
			l.floor = max(l.floor, p.end)
		}
	}
	l.spans = append(keep, l.spans[k:]...)
}

// Forgetting keeps what a pass over the half let go keeps, and raises the
// floor as far, on random lanes: nested, touching, equal, empty and
// crossing spans, some sorting earlier. A failing seed prints itself;
// go test ./internal/record -run ForgetAgrees -lane.seed=N replays it.
func TestForgetAgreesWithScan(t *testing.T) {
	seeds := laneSeeds(60)
	forgets := 0
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 5))
		l := &lane{}
		ps, pe := int64(0), int64(0) // the last span placed
		for step := 0; step < 8*laneHistory; step++ {
			var s, e int64
			switch rng.IntN(8) {
			case 0, 1, 2: // inside the last one, or at its ends
				s = ps + rng.Int64N(pe-ps+1)
				e = s + rng.Int64N(pe-s+1)
			case 3: // one that sorts earlier
				s = ps - rng.Int64N(60)
				e = s + rng.Int64N(80)
			default: // after it, or touching it
				s = pe + rng.Int64N(3)
				e = s + rng.Int64N(1+rng.Int64N(300))
			}
			var ls laneSpan
			pos, ok := l.fit(s, e, &ls)
			if !ok {
				continue
			}
			if pos == len(l.spans) {
				ps, pe = s, e
			}
			if len(l.spans) == laneHistory { // the insert below forgets
				want := &lane{spans: append([]laneSpan(nil), l.spans...), floor: l.floor}
				want.spans = slices.Insert(want.spans, pos, ls)
				forgetByScan(want)
				l.insert(pos, &ls)
				forgets++
				if !slices.Equal(l.spans, want.spans) || l.floor != want.floor {
					t.Fatalf("seed %d, step %d: forget kept %d spans, floor %d; the scan keeps %d, floor %d",
						seed, step, len(l.spans), l.floor, len(want.spans), want.floor)
				}
				continue
			}
			l.insert(pos, &ls)
		}
	}
	t.Logf("%d forgets", forgets)
	if forgets < len(seeds) {
		t.Fatalf("only %d forgets in %d seeds", forgets, len(seeds))
	}
}
