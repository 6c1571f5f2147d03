package record

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/framescope/framescope/timeline"
)

// collector keeps the batches a sink receives and checks the contract on
// each as it comes.
type collector struct {
	t       *testing.T
	batches []*timeline.Trace
}

func (c *collector) WriteBatch(b *timeline.Trace) error {
	c.t.Helper()
	if err := b.Validate(); err != nil {
		c.t.Errorf("batch %d: %v", len(c.batches), err)
	}
	if n := len(c.batches); n > 0 {
		prev := c.batches[n-1]
		if len(b.Names) < len(prev.Names) || !slices.Equal(b.Names[:len(prev.Names)], prev.Names) {
			c.t.Errorf("batch %d: names are not the table so far", n)
		}
		if len(b.Tracks) < len(prev.Tracks) || !slices.Equal(b.Tracks[:len(prev.Tracks)], prev.Tracks) {
			c.t.Errorf("batch %d: tracks are not the tracks so far", n)
		}
		if b.Drops.Spans < prev.Drops.Spans || b.Drops.QueryLimit < prev.Drops.QueryLimit {
			c.t.Errorf("batch %d: drops %+v are not a running total after %+v", n, b.Drops, prev.Drops)
		}
	}
	c.batches = append(c.batches, b)
	return nil
}

// merge joins the batches into one Trace, as a reader of the stream would.
func (c *collector) merge() *timeline.Trace {
	last := c.batches[len(c.batches)-1]
	tr := &timeline.Trace{Names: last.Names, Tracks: last.Tracks, Drops: last.Drops}
	for _, b := range c.batches {
		base := len(tr.Spans)
		tr.Spans = append(tr.Spans, b.Spans...)
		for _, f := range b.Flows {
			tr.Flows = append(tr.Flows, timeline.Flow{From: base + f.From, To: base + f.To})
		}
		tr.Frames = append(tr.Frames, b.Frames...)
		tr.Samples = append(tr.Samples, b.Samples...)
		tr.Calibrations = append(tr.Calibrations, b.Calibrations...)
	}
	return tr
}

func TestStreaming(t *testing.T) {
	const frames = 40
	c := &collector{t: t}
	r, q, zone := gpuSetup(Options{Sink: c, FlushEvery: 1, SettleFrames: 3})
	cpu := r.CPUTrack("render")
	worker := r.CPUTrack("worker")
	frame, submit, job := r.Name("frame"), r.Name("submit"), r.Name("job")
	var late [][]GPUSpan
	for f := uint64(1); f <= frames; f++ {
		r.BeginFrame()
		outer := cpu.Span(frame)
		worker.Span(job).End()
		s := cpu.Span(submit)
		s.Submitted(f)
		s.End()
		outer.End()
		now := timeline.Now()
		late = append(late, []GPUSpan{
			{Name: zone, Start: now, End: now + 500, Frame: f, Key: f},
			{Name: zone, Start: now + 10, End: now + 20, Frame: f, Key: f},
		})
		if len(late) > 2 { // two frames late
			_ = r.AddGPUSpans(q, late[0])
			late = late[1:]
		}
		if f%10 == 0 {
			_ = r.AddCalibration(timeline.Calibration{Track: q, Time: now, ErrNs: 3000, Samples: 8})
		}
		r.EndFrame()
	}
	for _, b := range late {
		_ = r.AddGPUSpans(q, b)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if len(c.batches) < frames {
		t.Fatalf("%d batches", len(c.batches))
	}
	tr := c.merge()
	checkDepths(t, tr) // nested across the whole stream
	kinds := map[timeline.TrackKind]int{}
	for _, s := range tr.Spans {
		kinds[tr.Track(s.Track).Kind]++
	}
	if kinds[timeline.TrackCPU] != 3*frames || kinds[timeline.TrackGPUQueue] != 2*frames || kinds[timeline.TrackFrames] != frames {
		t.Fatalf("streamed spans by kind %v", kinds)
	}
	if len(tr.Flows) != 2*frames {
		t.Fatalf("%d flows, want %d", len(tr.Flows), 2*frames)
	}
	for _, f := range tr.Flows {
		from, to := tr.Spans[f.From], tr.Spans[f.To]
		if from.Name != submit || from.Frame != to.Frame {
			t.Errorf("flow %+v -> %+v", from, to)
		}
	}
	if len(tr.Frames) != frames || len(tr.Calibrations) != frames/10 {
		t.Fatalf("%d frames, %d calibrations", len(tr.Frames), len(tr.Calibrations))
	}
	if st := r.Stats(); st.FlowsSplit != 0 || st.Drops.Total() != 0 {
		t.Fatalf("stats %+v", st)
	}
	// Nothing streamed stays in memory without a window.
	if r.Dump(); r.spans.len() != 0 {
		t.Fatalf("%d spans still held after streaming", r.spans.len())
	}
}

func TestSinkError(t *testing.T) {
	fail := errors.New("disk full")
	r := NewRecorder(Options{Sink: timeline.SinkFunc(func(*timeline.Trace) error { return fail })})
	tk := r.CPUTrack("main")
	tk.Span(r.Name("x")).End()
	if err := r.Flush(); !errors.Is(err, fail) {
		t.Fatalf("Flush = %v, want the sink's error", err)
	}
	if st := r.Stats(); st.SinkErrors != 1 {
		t.Fatalf("sink errors %d", st.SinkErrors)
	}
	// Without a sink, Flush only collects.
	r2 := NewRecorder(Options{})
	r2.CPUTrack("main").Span(r2.Name("x")).End()
	if err := r2.Flush(); err != nil || len(r2.Dump().Spans) != 1 {
		t.Fatalf("Flush without a sink: %v", err)
	}
}

// TestSinkErrorsReturned checks that the errors of the batches EndFrame
// flushed are returned by the next Close or Flush, once, with how many
// failed, and that what the failed batches held is counted (issue 16:
// Close returned nil after every write failed).
func TestSinkErrorsReturned(t *testing.T) {
	fail := errors.New("disk full")
	failing := true
	r := NewRecorder(Options{FlushEvery: 1, Sink: timeline.SinkFunc(func(*timeline.Trace) error {
		if failing {
			return fail
		}
		return nil
	})})
	tk := r.CPUTrack("main")
	x := r.Name("x")
	for range 10 {
		r.BeginFrame()
		tk.Span(x).End()
		r.EndFrame() // flushes a batch, which fails
	}
	err := r.Close()
	if !errors.Is(err, fail) || !strings.Contains(err.Error(), "10 batches failed") {
		t.Fatalf("Close = %v, want the sink's error and that 10 batches failed", err)
	}
	st := r.Stats()
	// Each frame: its span and x, itself, its CPU time sample.
	if want := (ItemCounts{Spans: 20, Frames: 10, Samples: 10}); st.SinkErrors != 10 || st.SinkLost != want {
		t.Fatalf("%d sink errors, lost %+v; want 10 and %+v", st.SinkErrors, st.SinkLost, want)
	}
	if st.Drops.Sink != 40 {
		t.Fatalf("Drops.Sink %d, want the 40 items lost", st.Drops.Sink)
	}
	if err := r.Flush(); err != nil {
		t.Fatalf("Flush after Close returned the errors: %v", err)
	}

	// One failure: the sink's error itself, from Flush.
	r.BeginFrame()
	r.EndFrame()
	if err := r.Flush(); !errors.Is(err, fail) || strings.Contains(err.Error(), "batches") {
		t.Fatalf("Flush = %v, want the one error", err)
	}
	failing = false
	r.BeginFrame()
	r.EndFrame()
	if err := r.Close(); err != nil {
		t.Fatalf("Close after the sink recovered = %v", err)
	}
	if st := r.Stats(); st.SinkErrors != 11 {
		t.Fatalf("%d sink errors, want 11", st.SinkErrors)
	}
}

// A recorder that saw nothing hands its sink one batch at Close (its
// process, tracks and books), so that the stream reads back as a trace
// rather than an empty file; once a batch went, Close with nothing new
// adds none, as Flush does.
func TestCloseGivesAnIdleSinkOneBatch(t *testing.T) {
	c := &collector{t: t}
	r, _, _ := gpuSetup(Options{Sink: c})
	if err := r.Flush(); err != nil || len(c.batches) != 0 {
		t.Fatalf("Flush with nothing: %d batches, %v", len(c.batches), err)
	}
	if err := r.Close(); err != nil || len(c.batches) != 1 {
		t.Fatalf("Close with nothing: %d batches, %v; want 1", len(c.batches), err)
	}
	if b := c.batches[0]; len(b.Tracks) == 0 || len(b.Spans) != 0 {
		t.Errorf("the batch holds %d tracks and %d spans; want the queue's track and no span", len(b.Tracks), len(b.Spans))
	}
	if err := r.Close(); err != nil || len(c.batches) != 1 {
		t.Fatalf("Close again: %d batches, %v; want still 1", len(c.batches), err)
	}
}
