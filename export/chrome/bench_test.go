package chrome

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/timeline"
)

// frameBatches returns n one-frame batches of benchspans' timeline, the
// spans the Perfetto writer's benchmark uses.
func frameBatches(n int) []*timeline.Trace {
	g := benchspans.New(1)
	out := make([]*timeline.Trace, n)
	for i := range out {
		out[i] = g.Batch(&timeline.Trace{Process: timeline.Process{PID: 4242, Name: "triangle"}, Names: benchspans.Names, Tracks: benchspans.Tracks()})
		g.Frame(out[i])
	}
	return out
}

// shift moves the batches later by d so they can be written again.
func shift(batches []*timeline.Trace, d int64) {
	for _, b := range batches {
		for i := range b.Spans {
			b.Spans[i].Start += d
			b.Spans[i].End += d
		}
		for i := range b.Frames {
			b.Frames[i].Start += d
			b.Frames[i].End += d
		}
		for i := range b.Samples {
			b.Samples[i].Time += d
		}
		for i := range b.Calibrations {
			b.Calibrations[i].Time += d
		}
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// perfettoPeer streams the batches through a Perfetto writer as the
// measured Chrome writer got them: warmed up by one pass, then pass after
// pass, each moved later by d (untimed) as the main loop moves them, so
// that the Perfetto writer continues its packet sequence rather than
// opening new ones for batches that reach back in time. It returns ns per
// span and bytes per span.
func perfettoPeer(batches []*timeline.Trace, d int64, budget time.Duration) (nsPerSpan, bytesPerSpan float64) {
	out := &countingWriter{}
	w := perfetto.NewWriter(out, perfetto.Options{})
	for _, bt := range batches { // warm up, as the measured writer was
		w.Write(bt)
	}
	out.n = 0
	spans := 0
	var el time.Duration
	for el < budget {
		shift(batches, d)
		start := time.Now()
		for _, bt := range batches {
			w.Write(bt)
			spans += len(bt.Spans)
		}
		el += time.Since(start)
	}
	w.Flush()
	if n := w.Stats().Sequences; n != 1 {
		panic(fmt.Sprintf("the Perfetto writer opened %d packet sequences, want 1", n))
	}
	return float64(el.Nanoseconds()) / float64(spans), float64(out.n) / float64(spans)
}

// BenchmarkChromeWriter streams one-frame batches of benchspans (about 60
// nested CPU and GPU spans each, with flows, a counter sample and a
// calibration) through a Writer, and reports per span: ns, bytes of JSON
// and allocations; then the same batches through the Perfetto writer in
// the same run, as ratios (chrome/perfetto) of time and bytes.
func BenchmarkChromeWriter(b *testing.B) {
	batches := frameBatches(256)
	first, last := batches[0].Frames[0].Start, batches[len(batches)-1].Frames[0].End
	out := &countingWriter{}
	w := NewWriter(out)
	for _, bt := range batches { // warm up: grow buffers, escape names
		w.WriteBatch(bt)
	}
	shift(batches, last-first+16_666_667)
	out.n = 0
	spans := 0
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(batches)
		if k == 0 && i > 0 {
			b.StopTimer()
			shift(batches, last-first+16_666_667)
			b.StartTimer()
		}
		if err := w.WriteBatch(batches[k]); err != nil {
			b.Fatal(err)
		}
		spans += len(batches[k].Spans)
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	if w.held != 0 {
		b.Fatalf("%d spans held", w.held)
	}
	el := b.Elapsed()
	ns := float64(el.Nanoseconds()) / float64(spans)
	bytes := float64(out.n) / float64(spans)
	b.ReportMetric(ns, "ns/span")
	b.ReportMetric(bytes, "bytes/span")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(spans), "allocs/span")
	pns, pbytes := perfettoPeer(batches, last-first+16_666_667, el/4+10*time.Millisecond)
	b.ReportMetric(ns/pns, "x-perfetto-ns")
	b.ReportMetric(bytes/pbytes, "x-perfetto-bytes")
}

// BenchmarkChromeRead reads back a JSON trace of 256 frames and reports ns
// and allocations per span.
func BenchmarkChromeRead(b *testing.B) {
	batches := frameBatches(256)
	var buf countingBuffer
	w := NewWriter(&buf)
	spans := 0
	for _, bt := range batches {
		w.WriteBatch(bt)
		spans += len(bt.Spans)
	}
	w.Close()
	b.SetBytes(int64(len(buf.b)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Read(&byteReader{b: buf.b}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans*b.N), "ns/span")
}

type countingBuffer struct{ b []byte }

func (c *countingBuffer) Write(p []byte) (int, error) {
	c.b = append(c.b, p...)
	return len(p), nil
}

var errEOF = io.EOF

type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errEOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
