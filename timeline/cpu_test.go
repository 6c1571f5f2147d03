package timeline

import "testing"

func TestCPUSpanAllocatesNothing(t *testing.T) {
	r := NewRecorder(Options{MaxPendingSpans: 1 << 20})
	tk := r.CPUTrack("main")
	name := r.Name("x")
	allocs := testing.AllocsPerRun(1000, func() {
		s := tk.Span(name)
		s.Submitted(7)
		tk.Span(name).End()
		s.End()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per span", allocs)
	}
}

// sinkInt keeps the clock reads of the floor benchmark alive.
var sinkInt int64

// BenchmarkTwoClockReads is the floor for BenchmarkCPUSpan: a span reads
// the clock twice.
func BenchmarkTwoClockReads(b *testing.B) {
	for b.Loop() {
		sinkInt += Now() - Now()
	}
}

// BenchmarkCPUSpan measures the begin and end of one span, and reports
// its ratio to two clock reads measured in the same run.
func BenchmarkCPUSpan(b *testing.B) {
	floor := clockFloor()
	r := NewRecorder(Options{})
	tk := r.CPUTrack("main")
	name := r.Name("x")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tk.Span(name).End()
		if i++; i == chunkSize*16 { // collect, as EndFrame would, off the clock
			i = 0
			b.StopTimer()
			r.mu.Lock()
			r.collectCPU()
			r.spans = r.spans[:0]
			r.mu.Unlock()
			b.StartTimer()
		}
	}
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(floor, "floor-ns/op")
	b.ReportMetric(per/floor, "x-floor")
}

// clockFloor measures two clock reads in ns, the best of a few rounds, for
// a benchmark to compare itself with in the same run.
func clockFloor() float64 {
	const n = 200_000
	best := int64(1) << 62
	for range 5 {
		t0 := Now()
		for range n {
			sinkInt += Now() - Now()
		}
		best = min(best, Now()-t0)
	}
	return float64(best) / n
}

// BenchmarkCPUSpanParallel runs one track per goroutine, each flushing now
// and then to a sink that discards: the span and its collection.
func BenchmarkCPUSpanParallel(b *testing.B) {
	discard := SinkFunc(func(*Trace) error { return nil })
	r := NewRecorder(Options{MaxPendingSpans: 1 << 14, Sink: discard})
	name := r.Name("x")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		tk := r.CPUTrack("worker")
		i := 0
		for pb.Next() {
			tk.Span(name).End()
			if i++; i == chunkSize*8 {
				i = 0
				_ = r.Flush() // collects every track
			}
		}
	})
	b.ReportMetric(float64(r.Stats().Drops.Spans)/float64(b.N), "dropped/op")
}
