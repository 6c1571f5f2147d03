package record

import (
	"slices"
	"testing"
	"unsafe"

	"github.com/framescope/framescope/timeline"
)

func TestDeque(t *testing.T) {
	var q deque[int]
	var want []int
	next, base := 0, uint64(0)
	check := func() {
		t.Helper()
		if q.len() != len(want) || q.end() != q.base+uint64(len(want)) {
			t.Fatalf("len %d, want %d", q.len(), len(want))
		}
		for i, v := range want {
			if *q.at(i) != v || *q.abs(q.base + uint64(i)) != v {
				t.Fatalf("item %d is %d, want %d", i, *q.at(i), v)
			}
		}
		if len(q.blocks) > (q.head+q.n+blockLen-1)/blockLen+1 {
			t.Fatalf("%d blocks for %d items from %d", len(q.blocks), q.n, q.head)
		}
	}
	push := func(n int) {
		for range n {
			q.push(next)
			want = append(want, next)
			next++
		}
	}
	pop := func(n int) {
		for range n {
			if q.base != base {
				t.Fatalf("base %d, want %d", q.base, base)
			}
			q.popFront()
			base++
			want = want[1:]
		}
	}
	push(3*blockLen + 5)
	check()
	pop(blockLen + 7)
	check()
	push(2 * blockLen)
	pop(2*blockLen - 3)
	check()
	if i := q.search(func(v *int) bool { return *v >= want[10] }); i != 10 {
		t.Fatalf("search found %d, want 10", i)
	}
	q.truncate(blockLen + 1)
	want = want[:blockLen+1]
	check()
	pop(q.len())
	check()
	push(10)
	check()
	q.truncate(0)
	want = want[:0]
	check()
	push(blockLen)
	check()

	// A queue of steady length allocates nothing, its blocks and their
	// pointers reused.
	push(3 * blockLen)
	if n := testing.AllocsPerRun(10, func() {
		for range 5 * blockLen {
			q.push(1)
			q.popFront()
		}
	}); n != 0 {
		t.Errorf("%v allocations a run of a steady queue, want 0", n)
	}
}

// TestHeldMarks checks which frames the store counts as lost when they
// leave: neither streamed nor dumped.
func TestHeldMarks(t *testing.T) {
	var h held[timeline.Frame]
	for i := range 10 {
		h.deque.push(timeline.Frame{ID: uint64(i + 1)})
	}
	h.cur = 3 // 1..3 went to a sink
	got := h.takeNew(nil)
	if len(got) != 7 || got[0].ID != 4 || h.cur != 10 {
		t.Fatalf("takeNew %v, cursor %d", got, h.cur)
	}
	h.cur = 3
	h.dumped = 5 // 1..5 were dumped
	var lost []uint64
	for h.len() > 0 {
		id := h.at(0).ID
		if h.pop() {
			lost = append(lost, id)
		}
	}
	if !slices.Equal(lost, []uint64{6, 7, 8, 9, 10}) {
		t.Fatalf("lost %v", lost)
	}
}

// TestStoreItemSizes pins the sizes DefaultMaxSpans's doc adds up.
func TestStoreItemSizes(t *testing.T) {
	got := []uintptr{unsafe.Sizeof(spanItem{}), unsafe.Sizeof(timeline.Frame{}), unsafe.Sizeof(timeline.Sample{}), unsafe.Sizeof(timeline.Calibration{}), unsafe.Sizeof(flowItem{})}
	if want := []uintptr{64, 24, 24, 40, 24}; !slices.Equal(got, want) {
		t.Fatalf("item sizes %v, want %v: update DefaultMaxSpans's doc", got, want)
	}
}

// BenchmarkEndFrameTail measures the latency of each EndFrame of a long
// run whose store is full (every kind at its cap, or at its window), and
// reports its median, its 99.99th percentile and their ratio: a recorder
// that compacts what it holds shows it in the tail, not in the mean. The
// floor is an empty spin as long as the median EndFrame, timed the same
// way after each frame: its tail is the machine's (interrupts,
// preemption), which EndFrame's tail cannot be told from.
func BenchmarkEndFrameTail(b *testing.B) {
	for _, bc := range []struct {
		name    string
		o       Options
		prefill int // frames recorded first, to fill the store
	}{
		// A frame stores 2 spans, 2 samples and itself: spans and
		// samples reach the cap after 512Ki frames, frames after 1Mi.
		{"defaults", Options{}, DefaultMaxSpans + 50_000},
		{"maxspans-8Ki", Options{MaxSpans: 1 << 13}, 20_000},
		{"window", Options{WindowFrames: 600}, 10_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewRecorder(bc.o)
			cpu := r.CPUTrack("render")
			work := r.Name("work")
			draws := r.Counter("draws", timeline.UnitCount)
			frame := func() int64 {
				r.BeginFrame()
				cpu.Span(work).End()
				draws.Set(1)
				t0 := timeline.Now()
				r.EndFrame()
				return timeline.Now() - t0
			}
			last := make([]int64, 0, 1<<14)
			for i := range bc.prefill {
				if d := frame(); bc.prefill-i <= cap(last) {
					last = append(last, d)
				}
			}
			slices.Sort(last)
			spin := last[len(last)/2]
			lat := make([]int64, 0, 1<<21)
			floor := make([]int64, 0, 1<<21)
			for b.Loop() {
				lat = append(lat, frame())
				t0 := timeline.Now()
				for timeline.Now()-t0 < spin {
				}
				floor = append(floor, timeline.Now()-t0)
			}
			slices.Sort(lat)
			slices.Sort(floor)
			at := func(s []int64, q float64) float64 { return float64(s[min(len(s)-1, int(q*float64(len(s))))]) }
			b.ReportMetric(at(lat, 0.5), "p50-ns")
			b.ReportMetric(at(lat, 0.9999), "p99.99-ns")
			b.ReportMetric(at(lat, 0.9999)/at(lat, 0.5), "p99.99/p50")
			b.ReportMetric(float64(lat[len(lat)-1]), "max-ns")
			b.ReportMetric(at(floor, 0.9999), "floor-p99.99-ns")
			b.ReportMetric(at(lat, 0.9999)/at(floor, 0.9999), "p99.99/floor-p99.99")
		})
	}
}

// TestMaxSpansEveryKind checks that MaxSpans bounds each kind the
// recorder holds, and that everything recorded is either in the Dump or
// counted as evicted.
func TestMaxSpansEveryKind(t *testing.T) {
	const n, maxSpans = 1000, 64
	r, q, zone := gpuSetup(Options{MaxSpans: maxSpans})
	cpu := r.CPUTrack("render")
	submit := r.Name("submit")
	for f := uint64(1); f <= n; f++ {
		r.BeginFrame()
		s := cpu.Span(submit)
		s.Submitted(f)
		s.End()
		r.EndFrame() // collects the CPU span
		now := timeline.Now()
		_ = r.AddGPUSpans(q, []GPUSpan{{Name: zone, Start: now, End: now + 10, Key: f}}) // a flow from submit
		_ = r.AddCalibration(timeline.Calibration{Track: q, Time: now, ErrNs: 1})        // and a sample
		r.lock()
		held := []int{r.spans.len(), r.flows.len(), r.frames.len(), r.samples.len(), r.cals.len()}
		r.mu.Unlock()
		for i, h := range held {
			if h > maxSpans {
				t.Fatalf("frame %d: kind %d holds %d items, more than %d", f, i, h, maxSpans)
			}
		}
	}
	tr := r.Dump()
	checkDepths(t, tr)
	st := r.Stats()
	// Per frame: 3 spans (submit, frame, GPU), a flow, the frame, 2
	// samples (CPU time, clock error), a calibration.
	got := ItemCounts{
		Spans:        st.Evicted.Spans + uint64(len(tr.Spans)),
		Flows:        st.Evicted.Flows + uint64(len(tr.Flows)),
		Frames:       st.Evicted.Frames + uint64(len(tr.Frames)),
		Samples:      st.Evicted.Samples + uint64(len(tr.Samples)),
		Calibrations: st.Evicted.Calibrations + uint64(len(tr.Calibrations)),
	}
	if want := (ItemCounts{Spans: 3 * n, Flows: n, Frames: n, Samples: 2 * n, Calibrations: n}); got != want {
		t.Fatalf("dumped and evicted %+v, want %+v recorded (evicted %+v)", got, want, st.Evicted)
	}
	if len(tr.Flows) == 0 || len(tr.Calibrations) != maxSpans {
		t.Errorf("dump holds %d flows and %d calibrations", len(tr.Flows), len(tr.Calibrations))
	}
}
