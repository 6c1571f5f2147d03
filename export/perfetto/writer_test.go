package perfetto

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/framescope/framescope/timeline"
)

// TestWriterSteadyStateAllocs: once its buffers have grown, the writer
// allocates nothing per batch.
func TestWriterSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in long mode")
	}
	batches := frameBatches(64)
	first, last := span(batches)
	w := NewWriter(io.Discard, Options{})
	for _, b := range batches {
		w.Write(b)
	}
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		if i%len(batches) == 0 {
			shift(batches, last-first+16_666_667)
		}
		if err := w.Write(batches[i%len(batches)]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("Write allocates %v times a batch in steady state, want 0", allocs)
	}
}

// TestBytesPerSpan: the realistic timeline costs at most 32 bytes a span,
// begin and end together, everything else in the trace included.
func TestBytesPerSpan(t *testing.T) {
	batches := frameBatches(64)
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	spans := 0
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		spans += len(b.Spans)
	}
	per := float64(buf.Len()) / float64(spans)
	t.Logf("%d bytes for %d spans: %.2f bytes a span", buf.Len(), spans, per)
	if per > 32 {
		t.Errorf("%.2f bytes a span, want at most 32", per)
	}
}

// TestInvalidInputIsCounted: bad items are dropped, counted in Stats and
// in the trace, and the rest is written.
func TestInvalidInputIsCounted(t *testing.T) {
	b := &timeline.Trace{
		Names:  names("ok"),
		Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "cpu"}, {ID: 2, Kind: timeline.TrackCounter, Name: "c"}, {ID: 0, Name: "no id"}},
		Spans: []timeline.Span{
			sp(1, 1, 0, 10, 0), // fine
			sp(1, 1, 10, 5, 0), // ends before it begins
			sp(9, 1, 0, 10, 0), // unknown track
			sp(1, 7, 0, 10, 0), // unknown name
			sp(2, 1, 0, 10, 0), // a span on a counter track
			{Track: 1, Name: 1, Start: -5, End: 3},
		},
		Flows:        []timeline.Flow{{From: 0, To: 1}, {From: 0, To: 0}, {From: -1, To: 0}, {From: 0, To: 99}},
		Samples:      []timeline.Sample{{Track: 1, Time: t0, Value: 1}, {Track: 2, Time: -1, Value: 1}},
		Calibrations: []timeline.Calibration{{Track: 1, Time: t0}},
		Frames:       []timeline.Frame{{ID: 1, Start: t0 + 5, End: t0}, {ID: 2, Start: t0, End: 0}},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{})
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	const want = 5 + 4 + 2 + 1 + 1 // spans, flows, samples, calibration, frame
	if got := w.Stats().Invalid; got != want {
		t.Errorf("Stats().Invalid = %d, want %d", got, want)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spans) != 1 || len(got.Flows) != 0 || len(got.Samples) != 0 || len(got.Frames) != 0 {
		t.Errorf("read back %d spans, %d flows, %d samples, %d frames; want 1, 0, 0, 0", len(got.Spans), len(got.Flows), len(got.Samples), len(got.Frames))
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

// TestWriterErrors: an io.Writer error is returned and sticks; Close ends
// the writer; a nil batch is refused.
func TestWriterErrors(t *testing.T) {
	c := cases()[1]
	w := NewWriter(&failWriter{after: 0}, Options{})
	if err := w.Write(c.batches[0]); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Write to a failing writer: got %v", err)
	}
	if err := w.Write(c.batches[0]); err == nil {
		t.Error("the error did not stick")
	}
	w = NewWriter(io.Discard, Options{})
	if err := w.Write(nil); err == nil {
		t.Error("Write(nil): want an error")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(c.batches[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: got %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestWriterFailsMidBatch: when the io.Writer fails in the middle of a
// batch, the writer drops what it encodes from then on instead of
// buffering it, and counts it: the bytes written and lost add up to what a
// working io.Writer gets.
func TestWriterFailsMidBatch(t *testing.T) {
	b := frameBatches(1)[0]
	ok := NewWriter(io.Discard, Options{FlushBytes: 64})
	if err := ok.Write(b); err != nil {
		t.Fatal(err)
	}
	w := NewWriter(&failWriter{after: 2}, Options{FlushBytes: 64})
	if err := w.Write(b); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Write: got %v, want the io.Writer's error", err)
	}
	st := w.Stats()
	if st.Lost == 0 || st.Bytes+st.Lost != ok.Stats().Bytes {
		t.Errorf("%d bytes written and %d lost, want %d in all, some lost", st.Bytes, st.Lost, ok.Stats().Bytes)
	}
	if n := len(w.e.buf); n > 64+4096 {
		t.Errorf("%d bytes still buffered after the failure", n)
	}
}

// TestSmallBuffersAndFewSequences writes every case flushing after each
// packet and with one packet sequence at a time, which makes every batch
// that reaches back open a new sequence: the trace must not change.
func TestSmallBuffersAndFewSequences(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, Options{FlushBytes: 1, MaxSequences: 1})
			for _, b := range c.batches {
				if err := w.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			checkTrace(t, expect(c), got)
		})
	}
}

// TestLateResultsReuseSequences: batches that reach back in time (late GPU
// results) continue older packet sequences instead of opening one each.
func TestLateResultsReuseSequences(t *testing.T) {
	bs := lateBatches(40, 3)
	w := NewWriter(io.Discard, Options{})
	for _, b := range bs {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.Stats().Sequences; n > 3 {
		t.Errorf("%d batches opened %d packet sequences, want at most 3", len(bs), n)
	}
}

// TestWriterReset: a writer reset after one trace writes the next as a
// new writer would (read back the same), whatever the first held.
func TestWriterReset(t *testing.T) {
	cs := cases()
	var reused bytes.Buffer
	w := NewWriter(&reused, Options{})
	for i, c := range cs {
		prev := cs[(i+1)%len(cs)] // a different trace first
		for _, b := range prev.batches {
			w.Write(b)
		}
		w.Close()
		reused.Reset()
		w.Reset(&reused)
		var fresh bytes.Buffer
		nw := NewWriter(&fresh, Options{})
		for _, b := range c.batches {
			if err := w.Write(b); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			nw.Write(b)
		}
		w.Close()
		nw.Close()
		a, errA := Read(bytes.NewReader(reused.Bytes()))
		b, errB := Read(bytes.NewReader(fresh.Bytes()))
		if errA != nil || errB != nil {
			t.Fatalf("%s: reading back: %v, %v", c.name, errA, errB)
		}
		if !reflect.DeepEqual(a, b) || w.Stats() != nw.Stats() {
			t.Errorf("%s: the reset writer wrote another trace than a new one:\nreset %+v\nnew   %+v", c.name, w.Stats(), nw.Stats())
		}
	}
}

// TestEventKeyHoldsItsFields: an event keeps its track, kind, source and
// depth only in its sort key (24 bytes an event, issue 38's memory bound);
// they come back as made, at the ends of their ranges.
func TestEventKeyHoldsItsFields(t *testing.T) {
	if size := unsafe.Sizeof(event{}); size != 24 {
		t.Errorf("an event is %d bytes, want 24", size)
	}
	for _, track := range []int32{-1, 0, 1, 1<<31 - 2} {
		for _, kind := range []uint8{evEnd, evBegin, evZero, evOther} {
			for _, src := range []uint8{srcSpan, srcFrame, srcSample, srcCalib, srcWork} {
				for _, depth := range []uint16{0, 1, 0xfffe, 0xffff} {
					if kind == evOther {
						depth = 0 // made at depth 0 only
					}
					e := mkEvent(-5, track, 9, depth, kind, src)
					if e.track() != track || e.kind() != kind || e.src() != src || e.depth() != depth || e.ts != -5 || e.idx != 9 {
						t.Fatalf("mkEvent(track %d, kind %d, src %d, depth %d) gives back track %d, kind %d, src %d, depth %d",
							track, kind, src, depth, e.track(), e.kind(), e.src(), e.depth())
					}
				}
			}
		}
	}
}
