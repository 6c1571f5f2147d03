package chrome

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
)

// merge joins streaming batches into the whole trace they describe.
func merge(batches []*timeline.Trace) *timeline.Trace {
	t := &timeline.Trace{}
	for _, b := range batches {
		t.Process, t.Names, t.Tracks, t.Drops, t.Ledger = b.Process, b.Names, b.Tracks, b.Drops, b.Ledger
		base := len(t.Spans)
		t.Spans = append(t.Spans, b.Spans...)
		for _, f := range b.Flows {
			t.Flows = append(t.Flows, timeline.Flow{From: base + f.From, To: base + f.To})
		}
		t.Frames = append(t.Frames, b.Frames...)
		t.Samples = append(t.Samples, b.Samples...)
		t.Calibrations = append(t.Calibrations, b.Calibrations...)
	}
	return t
}

// TestRecorderSink streams a record.Recorder into a Writer, as the
// profiler does, and checks the file against the batches the recorder
// handed over, with Read and in Perfetto's trace processor.
func TestRecorderSink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recorded.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f)
	var batches []*timeline.Trace
	sink := timeline.SinkFunc(func(b *timeline.Trace) error {
		batches = append(batches, b)
		return w.WriteBatch(b)
	})
	rec := record.NewRecorder(record.Options{Process: timeline.Process{PID: 99, Name: "recorded"}, Sink: sink, FlushEvery: 2, SettleFrames: 1})
	main := rec.CPUTrack("main")
	q := rec.QueueTrack(timeline.Queue{Device: "test GPU", Flags: "graphics"})
	nFrame, nSubmit, nPass, nDraw := rec.Name("update"), rec.Name("vkQueueSubmit"), rec.Name("pass"), rec.Name("draw \"x\"\n")
	work := rec.Counter("work", timeline.UnitCount)
	for i := 0; i < 12; i++ {
		frame := rec.BeginFrame()
		outer := main.Span(nFrame)
		sub := main.Span(nSubmit)
		sub.Submitted(uint64(i + 1))
		start := timeline.Now()
		sub.End()
		end := timeline.Now() + 50_000
		// The GPU zones: an outer pass with a child starting with it.
		if err := rec.AddGPUSpans(q, []record.GPUSpan{
			{Name: nPass, Start: start + 1_000, End: end, Frame: frame, ErrNs: 2600, Key: uint64(i + 1)},
			{Name: nDraw, Start: start + 1_000, End: start + 3_000, Frame: frame, ErrNs: 2600, Depth: 1},
		}); err != nil {
			t.Fatal(err)
		}
		work.Set(float64(i))
		outer.End()
		rec.EndFrame()
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if len(batches) < 2 {
		t.Fatalf("the recorder made %d batches, want several", len(batches))
	}
	want := merge(batches)
	if err := want.Validate(); err != nil {
		t.Fatalf("the recorder's batches: %v", err)
	}
	if len(want.Spans) < 12*4 || len(want.Flows) == 0 || len(want.Frames) == 0 || len(want.Samples) == 0 {
		t.Fatalf("recorded %d spans, %d flows, %d frames, %d samples: want all kinds", len(want.Spans), len(want.Flows), len(want.Frames), len(want.Samples))
	}
	if w.Invalid() != (Invalid{}) {
		t.Errorf("the writer refused %+v", w.Invalid())
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got, err := Read(in)
	if err != nil {
		t.Fatal(err)
	}
	diffCanon(t, canon(got), canon(want))
	// The books came through, and a closed recorder's balance: all
	// delivered, in the file.
	if l := got.Ledger; l != want.Ledger || !l.Balanced(got.Drops) || l.Zones.Open+l.Spans.Open+l.Flows.Open != 0 ||
		l.Zones.Delivered != 24 || l.Spans.Delivered != 24 || l.Flows.Delivered != uint64(len(got.Flows)) {
		t.Errorf("ledger read back %+v, want %+v, balanced, nothing open, 24 zones, 24 spans and every flow delivered", got.Ledger, want.Ledger)
	}
	s := tpcheck.Check(t, path)
	if g, w := tpSlices(t, s), wantSlices(want); !slices.Equal(g, w) {
		t.Errorf("trace processor slices:\ngot  %v\nwant %v", g, w)
	}
}
