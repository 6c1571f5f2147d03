package live

import (
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/framescope/framescope/export/perfetto"
	"github.com/framescope/framescope/export/pprof"
	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/testkit/benchspans"
	"github.com/framescope/framescope/timeline"
)

// BenchmarkCaptureStream is the cost of four trace captures of a running
// application, per span: the stream holding each frame until its zones
// are in and cutting batches, each batch written by four writers, against
// its floor measured in the same run, one writer writing the same frames
// four times. Figures: ns/span, x-floor, and allocs/op (a frame); once
// warm the stream reuses its batches and allocates nothing.
func BenchmarkCaptureStream(b *testing.B) {
	const captures, lag = 4, 3
	g := benchspans.New(11)
	frames := make([]*timeline.Trace, 64)
	for i := range frames {
		frames[i] = g.Batch(nil)
		g.Frame(frames[i])
	}
	spans := 0
	for _, f := range frames {
		spans += len(f.Spans)
	}
	// The floor: each frame as one batch, four times.
	floor := func(n int) time.Duration {
		ws := make([]*perfetto.Writer, captures)
		for i := range ws {
			ws[i] = perfetto.NewWriter(io.Discard, perfetto.Options{FlushBytes: 16 << 10})
		}
		t0 := time.Now()
		for i := 0; i < n; i++ {
			for _, w := range ws {
				w.WriteBatch(frames[i%len(frames)])
			}
		}
		return time.Since(t0)
	}
	// The stream: a Peek a frame, the GPU zones lag frames late.
	wn := window{names: benchspans.Names, tracks: benchspans.Tracks()}
	var st stream
	st.start(&wn, timeline.Process{})
	ws := make([]*perfetto.Writer, captures)
	for i := range ws {
		ws[i] = perfetto.NewWriter(io.Discard, perfetto.Options{FlushBytes: 16 << 10})
	}
	var p record.Peeked
	var seq uint64
	var t timeline.Trace
	id := uint64(0)
	frame := func() {
		id++
		p = record.Peeked{Spans: p.Spans[:0], Seqs: p.Seqs[:0], Frames: p.Frames[:0], Flows: p.Flows[:0]}
		f := frames[id%uint64(len(frames))]
		first := seq + 1
		for _, s := range f.Spans {
			s.Frame = id
			p.Spans = append(p.Spans, s)
			seq++
			p.Seqs = append(p.Seqs, seq)
		}
		for _, fl := range f.Flows {
			p.Flows = append(p.Flows, [2]uint64{first + uint64(fl.From), first + uint64(fl.To)})
		}
		p.Frames = append(p.Frames, timeline.Frame{ID: id, Start: f.Frames[0].Start, End: f.Frames[0].End})
		if id > lag {
			p.Settled = id - lag
		}
		st.add(&p)
		for _, bt := range st.emit(&wn, p.Settled, p.Drops, st.full()) {
			for _, w := range ws {
				bt.refs.Add(1)
				t = bt.t
				w.WriteBatch(&t)
				bt.release()
			}
			bt.release()
		}
	}
	for range 1000 { // warm: batches in the pool, writers' buffers grown
		frame()
	}
	var streamT time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		frame()
		streamT += time.Since(t0)
	}
	b.StopTimer()
	n := b.N
	fl := floor(n)
	per := float64(spans) / float64(len(frames))
	b.ReportMetric(float64(streamT.Nanoseconds())/float64(n)/per, "ns/span")
	b.ReportMetric(float64(streamT)/float64(fl), "x-floor")
	if st.last == 0 {
		b.Fatal("no batch")
	}
}

// TestCaptureMemoryBounded: what a trace capture and a gpu capture hold
// does not grow with their length: the heap after 30,000 frames streamed
// through both is the heap after 3,000 (3,000 and 300 under the race
// detector).
func TestCaptureMemoryBounded(t *testing.T) {
	g := benchspans.New(12)
	frames := make([]*timeline.Trace, 64)
	for i := range frames {
		frames[i] = g.Batch(nil)
		g.Frame(frames[i])
	}
	wn := window{names: benchspans.Names, tracks: benchspans.Tracks()}
	var st stream
	st.start(&wn, timeline.Process{})
	outs := []captureOut{&traceOut{rw: discard{}}, &profileOut{rw: discard{}, b: pprof.NewBuilder(pprof.Options{OmitFrames: true})}}
	var p record.Peeked
	var seq uint64
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var h0 uint64
	early, late := uint64(3000), uint64(30000)
	if raceOn {
		early, late = 300, 3000
	}
	for id := uint64(1); id <= late; id++ {
		p = record.Peeked{Spans: p.Spans[:0], Seqs: p.Seqs[:0], Frames: p.Frames[:0]}
		f := frames[id%uint64(len(frames))]
		shift := int64(id)*16_666_667 - f.Frames[0].Start // frame id at its own time
		for _, s := range f.Spans {
			s.Start += shift
			s.End += shift
			s.Frame = id
			p.Spans = append(p.Spans, s)
			seq++
			p.Seqs = append(p.Seqs, seq)
		}
		p.Frames = append(p.Frames, timeline.Frame{ID: id, Start: int64(id) * 16_666_667, End: int64(id)*16_666_667 + 1})
		p.Settled = id - 1
		st.add(&p)
		for _, b := range st.emit(&wn, p.Settled, p.Drops, st.full()) {
			for _, o := range outs {
				bt := b.t
				if err := o.batch(&bt); err != nil {
					t.Fatal(err)
				}
			}
			b.release()
		}
		switch id {
		case early:
			h0 = heap()
		case late:
			if h := heap(); h > h0+256<<10 {
				t.Errorf("heap grew from %d to %d bytes between frames %d and %d", h0, h, early, late)
			}
		}
	}
	for _, o := range outs {
		o.end(&timeline.Trace{Names: wn.names, Tracks: wn.tracks})
	}
}

// discard is a ResponseWriter that drops what it is sent.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
