package record

import "github.com/framescope/framescope/timeline"
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
		t := timeline.Now()
		sinkInt += timeline.Now() - t
	}
}

// BenchmarkCPUSpan measures the begin and end of one span. Between blocks
// of spans, off the clock, it collects the track (as EndFrame would) and
// times a block of two clock reads: it reports the fastest block of each
// and their ratio, which a busy machine disturbs less than ns/op.
func BenchmarkCPUSpan(b *testing.B) {
	const block = chunkSize * 16
	r := NewRecorder(Options{})
	tk := r.CPUTrack("main")
	name := r.Name("x")
	spanBest, floorBest := int64(1)<<62, int64(1)<<62
	b.ReportAllocs()
	i, t0 := 0, timeline.Now()
	for b.Loop() {
		tk.Span(name).End()
		if i++; i == block {
			spanBest = min(spanBest, timeline.Now()-t0)
			b.StopTimer()
			r.lock()
			r.collectCPU()
			r.spans.truncate(0)
			r.mu.Unlock()
			floorBest = min(floorBest, clockBlock(block))
			b.StartTimer()
			i, t0 = 0, timeline.Now()
		}
	}
	if spanBest < 1<<62 {
		b.ReportMetric(float64(spanBest)/block, "best-ns/span")
		b.ReportMetric(float64(floorBest)/block, "best-ns/floor")
		b.ReportMetric(float64(spanBest)/float64(floorBest), "x-floor")
	}
}

// clockBlock times n pairs of clock reads.
func clockBlock(n int) int64 {
	t0 := timeline.Now()
	for range n {
		t := timeline.Now()
		sinkInt += timeline.Now() - t
	}
	return timeline.Now() - t0
}

// BenchmarkCPUSpanParallel runs one track per goroutine, each flushing now
// and then to a sink that discards: the span and its collection.
func BenchmarkCPUSpanParallel(b *testing.B) {
	discard := timeline.SinkFunc(func(*timeline.Trace) error { return nil })
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
