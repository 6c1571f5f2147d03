package perfetto

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/internal/testkit/tpcheck"
	"github.com/framescope/framescope/timeline"
)

// TestRecorderSink streams a record.Recorder into a Writer, as the
// profiler does, and checks the file against the batches the recorder
// handed over, in Read and in the trace processor.
func TestRecorderSink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recorded.pftrace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, Options{})
	var batches []*timeline.Trace
	sink := timeline.SinkFunc(func(b *timeline.Trace) error {
		batches = append(batches, b)
		return w.WriteBatch(b)
	})
	rec := record.NewRecorder(record.Options{Process: timeline.Process{PID: 99, Name: "recorded"}, Sink: sink, FlushEvery: 2, SettleFrames: 1})
	main := rec.CPUTrack("main")
	q := rec.QueueTrack(timeline.Queue{Device: "test GPU", Family: 0, Index: 0, Flags: "graphics"})
	nFrame, nSubmit, nPass := rec.Name("update"), rec.Name("vkQueueSubmit"), rec.Name("pass")
	cpuTime := rec.Counter("work", timeline.UnitCount)
	for i := 0; i < 12; i++ {
		frame := rec.BeginFrame()
		outer := main.Span(nFrame)
		sub := main.Span(nSubmit)
		sub.Submitted(uint64(i + 1))
		start := timeline.Now()
		sub.End()
		end := timeline.Now() + 50_000
		if err := rec.AddGPUSpans(q, []record.GPUSpan{
			{Name: nPass, Start: start + 1_000, End: end, Frame: frame, ErrNs: 2600, Key: uint64(i + 1)},
			{Name: nPass, Start: start + 2_000, End: start + 3_000, Frame: frame, ErrNs: 2600, Depth: 1},
		}); err != nil {
			t.Fatal(err)
		}
		cpuTime.Set(float64(i))
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
	c := tcase{name: "recorder", batches: batches}
	x := expect(c)
	if len(x.spans) < 12*4 || len(x.flows) == 0 || len(x.frames) == 0 || len(x.samples) == 0 {
		t.Fatalf("recorded %d spans, %d flows, %d frames, %d samples: want all kinds", len(x.spans), len(x.flows), len(x.frames), len(x.samples))
	}
	t.Logf("%d batches: %d spans, %d flows, %d frames, %d samples; writer %+v", len(batches), len(x.spans), len(x.flows), len(x.frames), len(x.samples), w.Stats())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, x, got)
	s := tpcheck.Check(t, path)
	checkProcessor(t, s, x)
}
