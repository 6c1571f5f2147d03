package record_test

import (
	"fmt"
	"time"

	"github.com/framescope/framescope/internal/record"
	"github.com/framescope/framescope/timeline"
)

// update is a function of the render loop, timed by one line.
func update(track *record.CPUTrack, name timeline.NameID) {
	defer track.Span(name).End()
	// ... work ...
}

func Example_cpuSpans() {
	rec := record.NewRecorder(record.Options{})
	render := rec.CPUTrack("render loop")
	frameName, updateName := rec.Name("frame"), rec.Name("update")

	for range 2 {
		rec.BeginFrame()
		s := render.Span(frameName)
		update(render, updateName)
		s.End()
		rec.EndFrame()
	}

	tr := rec.Dump()
	for _, s := range tr.Spans {
		if s.Track == render.ID() {
			fmt.Printf("frame %d depth %d %s\n", s.Frame, s.Depth, tr.Name(s.Name))
		}
	}
	// Output:
	// frame 1 depth 1 update
	// frame 1 depth 0 frame
	// frame 2 depth 1 update
	// frame 2 depth 0 frame
}

func Example_gpuLanes() {
	rec := record.NewRecorder(record.Options{})
	q := rec.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 0, Index: 0, Flags: "graphics"})
	draw, blur := rec.Name("draw"), rec.Name("blur")
	// Two command buffers in flight overlap; the second one's blur nests
	// inside it. Times are host ns, already converted by the clock model.
	err := rec.AddGPUSpans(q, []record.GPUSpan{
		{Name: draw, Start: 1000, End: 5000, Frame: 1, ErrNs: 300},
		{Name: draw, Start: 4000, End: 9000, Frame: 2, ErrNs: 300},
		{Name: blur, Start: 6000, End: 7000, Frame: 2, ErrNs: 300, Depth: 1},
	})
	if err != nil {
		fmt.Println(err)
	}
	tr := rec.Dump()
	for _, s := range tr.Spans {
		fmt.Printf("%s frame %d on %q depth %d\n", tr.Name(s.Name), s.Frame, tr.Track(s.Track).Name, s.Depth)
	}
	// Output:
	// draw frame 1 on "NVIDIA H200 / graphics queue 0.0" depth 0
	// draw frame 2 on "NVIDIA H200 / graphics queue 0.0 lane 1" depth 0
	// blur frame 2 on "NVIDIA H200 / graphics queue 0.0 lane 1" depth 1
}

func Example_flows() {
	rec := record.NewRecorder(record.Options{})
	render := rec.CPUTrack("render loop")
	q := rec.QueueTrack(timeline.Queue{Device: "llvmpipe", Flags: "graphics"})
	submit, pass := rec.Name("vkQueueSubmit"), rec.Name("shadow pass")

	frame := rec.BeginFrame()
	s := render.Span(submit)
	const key = 17 // the profiler's key for this submission
	s.Submitted(key)
	s.End()
	rec.EndFrame()

	// Frames later, the profiler reads the zones back.
	now := timeline.Now()
	_ = rec.AddGPUSpans(q, []record.GPUSpan{{Name: pass, Start: now, End: now + 1000, Frame: frame, Key: key}})

	tr := rec.Dump()
	for _, f := range tr.Flows {
		from, to := tr.Spans[f.From], tr.Spans[f.To]
		fmt.Printf("%s -> %s (frame %d)\n", tr.Name(from.Name), tr.Name(to.Name), to.Frame)
	}
	// Output:
	// vkQueueSubmit -> shadow pass (frame 1)
}

func Example_flightRecorder() {
	// A flight recorder of the last 3 frames that dumps them when a frame
	// goes over its GPU budget (CPUBudget does the same for CPU time).
	rec := record.NewRecorder(record.Options{
		WindowFrames: 3,
		SettleFrames: 1, // GPU results come in the next frame
		GPUBudget:    2 * time.Millisecond,
		OnBudget: func(o record.OverBudget) {
			fmt.Printf("frame %d over the %s budget: %v > %v\n", o.Frame, o.Budget, o.Took, o.Limit)
			for _, f := range o.Trace.Frames {
				fmt.Println("dumped frame", f.ID)
			}
			// An exporter would write o.Trace to a file here.
		},
	})
	q := rec.QueueTrack(timeline.Queue{Device: "llvmpipe", Flags: "graphics"})
	draw := rec.Name("draw")
	gpuTime := []time.Duration{1, 1, 1, 3, 1, 1, 1} // ms per frame; frame 4 is slow
	t0 := timeline.Now()
	results := func(frame uint64) { // read back by the profiler, on the host clock
		start := t0 + int64(frame)*int64(10*time.Millisecond)
		end := start + int64(gpuTime[frame-1]*time.Millisecond)
		_ = rec.AddGPUSpans(q, []record.GPUSpan{{Name: draw, Start: start, End: end, Frame: frame}})
	}
	for range gpuTime {
		frame := rec.BeginFrame()
		if frame > 1 {
			results(frame - 1)
		}
		rec.EndFrame()
	}
	results(uint64(len(gpuTime)))
	_ = rec.Close()
	// Output:
	// frame 4 over the gpu budget: 3ms > 2ms
	// dumped frame 3
	// dumped frame 4
	// dumped frame 5
}

func Example_streaming() {
	var spans, batches int
	sink := timeline.SinkFunc(func(b *timeline.Trace) error {
		batches++
		spans += len(b.Spans)
		return b.Validate() // every batch stands on its own
	})
	rec := record.NewRecorder(record.Options{Sink: sink, FlushEvery: 2})
	render := rec.CPUTrack("render loop")
	work := rec.Name("work")
	for range 6 {
		rec.BeginFrame()
		render.Span(work).End()
		rec.EndFrame()
	}
	if err := rec.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println(batches, "batches,", spans, "spans") // a work and a frame span per frame
	// Output:
	// 3 batches, 12 spans
}

func ExampleCounter() {
	rec := record.NewRecorder(record.Options{})
	draws := rec.Counter("draw calls", timeline.UnitCount)
	draws.SetAt(1000, 42)
	draws.SetAt(2000, 40)
	tr := rec.Dump()
	for _, s := range tr.Samples {
		fmt.Println(tr.Track(s.Track).Name, s.Time, s.Value)
	}
	// Output:
	// draw calls 1000 42
	// draw calls 2000 40
}

func ExampleTrace_Validate() {
	tr := &timeline.Trace{
		Names:  []string{"", "a"},
		Tracks: []timeline.Track{{ID: 1, Kind: timeline.TrackCPU, Name: "main"}},
		Spans: []timeline.Span{
			{Track: 1, Name: 1, Start: 0, End: 10},
			{Track: 1, Name: 1, Start: 5, End: 15}, // crosses the first
		},
	}
	fmt.Println(tr.Validate())
	// Output:
	// spans 0 [0, 10] and 1 [5, 15] on track 1 overlap without nesting
}

func ExampleRecorder_AddCalibration() {
	rec := record.NewRecorder(record.Options{})
	q := rec.QueueTrack(timeline.Queue{Device: "NVIDIA H200", Family: 2, Index: 0, Flags: "compute"})
	// The profiler refits its clock model and passes the quality on.
	err := rec.AddCalibration(timeline.Calibration{Track: q, Time: 5000, ErrNs: 2600, DriftPPM: 9.8, Samples: 32})
	if err != nil {
		fmt.Println(err)
	}
	tr := rec.Dump()
	fmt.Println(len(tr.Calibrations), "calibration")
	for _, s := range tr.Samples {
		fmt.Printf("%s: %v ns at %d\n", tr.Track(s.Track).Name, s.Value, s.Time)
	}
	// Output:
	// 1 calibration
	// NVIDIA H200 / compute queue 2.0 clock error: 2600 ns at 5000
}
